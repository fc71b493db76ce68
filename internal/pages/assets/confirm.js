// Confirmation dialogs (issue 30 item 3): a form marked data-confirm
// (revoke a key, leave a workspace...) asks the server for its
// confirmation step (the same post without confirm=yes, which changes
// nothing), and shows that step's title, sentence and form in a <dialog>
// instead of a page. Its button posts the step's form as the page would.
// Without this script, or when anything goes wrong, the form posts as
// before and the server shows the step as a page.
(function () {
  "use strict";
  if (typeof HTMLDialogElement !== "function" || !window.fetch || !window.DOMParser) return;

  function stepOf(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var yes = doc.querySelector('main form input[name="confirm"][value="yes"]');
    var title = doc.querySelector("main h1");
    if (!yes || !title) return null;
    var form = yes.form, text = form.parentNode.querySelector("p");
    return { title: title.textContent, text: text ? text.textContent : "", form: form };
  }

  function show(step, opener) {
    var dialog = document.createElement("dialog");
    dialog.className = "confirm-dialog";
    dialog.setAttribute("aria-labelledby", "confirm-dialog-title");
    dialog.setAttribute("aria-describedby", "confirm-dialog-text");
    var h = document.createElement("h2");
    h.id = "confirm-dialog-title";
    h.textContent = step.title;
    var p = document.createElement("p");
    p.id = "confirm-dialog-text";
    p.textContent = step.text;
    var form = document.importNode(step.form, true);
    // The page's "Cancel" link goes back; in the dialog it closes it.
    form.querySelectorAll("a").forEach(function (a) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "secondary";
      b.textContent = a.textContent;
      b.addEventListener("click", function () { dialog.close(); });
      a.replaceWith(b);
    });
    dialog.append(h, p, form);
    dialog.addEventListener("close", function () {
      dialog.remove();
      if (opener) opener.focus();
    });
    (document.querySelector("main") || document.body).append(dialog);
    dialog.showModal();
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-confirm") || form.dataset.confirming) return;
    ev.preventDefault();
    form.dataset.confirming = "1";
    var opener = ev.submitter || form.querySelector("button");
    fetch(form.action, { method: "POST", credentials: "same-origin", body: new URLSearchParams(new FormData(form)) })
      .then(function (res) { return res.ok ? res.text() : Promise.reject(new Error(String(res.status))); })
      .then(function (html) {
        var step = stepOf(html);
        if (!step) throw new Error("no confirmation step");
        delete form.dataset.confirming;
        show(step, opener);
      })
      .catch(function () { form.submit(); }); // the page's step instead
  });
})();
