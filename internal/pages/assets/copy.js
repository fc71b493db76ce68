// Copy buttons: a button with data-copy="ID" copies the text of element ID.
// The pages work without it (the text can be selected by hand).
document.querySelectorAll("button[data-copy]").forEach(function (b) {
  b.hidden = false;
  b.addEventListener("click", function () {
    var el = document.getElementById(b.dataset.copy);
    if (!el || !navigator.clipboard) return;
    navigator.clipboard.writeText(el.textContent.trim()).then(function () {
      var status = document.getElementById(b.dataset.copy + "-status");
      if (status) status.textContent = "Copied.";
    });
  });
});
