// Passkey ceremonies of the hosted pages (issue 13): "Sign in with a
// passkey" and conditional UI on /signin, "Use a passkey" on the second
// step (/signin/mfa), "Use a passkey instead" on a reset link's page
// (/reset-password, with the new password), "Add a passkey" on
// /account/passkeys. Served from /assets/passkey.js (the pages' CSP allows
// no inline script); without it, or without WebAuthn, the pages work as
// before and these buttons stay hidden.
(function () {
  "use strict";
  // The script's own messages come in the page's language from its tag's
  // data attributes (filled through the catalogue); English if absent.
  var tag = document.currentScript || document.querySelector('script[src="/assets/passkey.js"]');
  var words = (tag && tag.dataset) || {};
  function say(key, english) { return words[key] || english; }
  if (!window.PublicKeyCredential || !navigator.credentials) return;

  function fromB64(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function toB64(buf) {
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function ids(list) {
    return (list || []).map(function (c) { return Object.assign({}, c, { id: fromB64(c.id) }); });
  }
  function creationOptions(pk) {
    return Object.assign({}, pk, { challenge: fromB64(pk.challenge), user: Object.assign({}, pk.user, { id: fromB64(pk.user.id) }),
      excludeCredentials: ids(pk.excludeCredentials) });
  }
  function requestOptions(pk) {
    return Object.assign({}, pk, { challenge: fromB64(pk.challenge), allowCredentials: ids(pk.allowCredentials) });
  }
  function credentialJSON(c) {
    var r = c.response, out = { id: c.id, rawId: toB64(c.rawId), type: c.type, authenticatorAttachment: c.authenticatorAttachment || undefined,
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {}, response: { clientDataJSON: toB64(r.clientDataJSON) } };
    if (r.attestationObject) {
      out.response.attestationObject = toB64(r.attestationObject);
      if (r.getTransports) out.response.transports = r.getTransports();
    } else {
      out.response.authenticatorData = toB64(r.authenticatorData);
      out.response.signature = toB64(r.signature);
      if (r.userHandle) out.response.userHandle = toB64(r.userHandle);
    }
    return out;
  }
  function post(url, body) {
    return fetch(url, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body || {}) }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (data) {
        if (!res.ok) throw Object.assign(new Error(data.error || say("failed", "The request failed.")), { code: data.code });
        return data;
      });
    });
  }
  function show(el, msg) {
    if (!el) return;
    el.textContent = msg;
    el.hidden = !msg;
  }
  function failed(err) {
    if (err && (err.name === "NotAllowedError" || err.name === "AbortError")) return say("cancelled", "The passkey request was cancelled or timed out.");
    return (err && err.message) || say("unknown", "Something went wrong.");
  }

  // Sign-in page.
  var signin = document.getElementById("passkey-signin");
  if (signin) {
    var errorEl = document.getElementById("passkey-error");
    var nextEl = document.querySelector('form[action="/signin"] input[name=next]');
    var pending = null; // the conditional request, aborted before a modal one
    // signIn runs one sign-in ceremony: modal (mediation "") or
    // conditional (the browser offers passkeys in the email field).
    // A conditional request the person never used (the browser refused
    // it, say on an IP address) says nothing: only one that got a passkey
    // from them reports how it failed.
    var signIn = function (mediation, ctl) {
      var chosen = !mediation;
      return post("/v1/auth/passkey/begin").then(function (begun) {
        var opts = { publicKey: requestOptions(begun.publicKey), signal: ctl.signal };
        if (mediation) opts.mediation = mediation;
        return navigator.credentials.get(opts).then(function (cred) {
          chosen = true;
          return post("/signin/passkey", { ceremony_id: begun.ceremony_id, credential: credentialJSON(cred), next: nextEl ? nextEl.value : "" });
        });
      }).then(function (done) { window.location.assign(done.next || "/signin"); })
        .catch(function (err) { if (!ctl.signal.aborted && chosen) show(errorEl, failed(err)); });
    };
    signin.hidden = false;
    signin.addEventListener("click", function () {
      if (pending) pending.abort();
      pending = false; // no conditional request after a modal one
      show(errorEl, "");
      signIn("", new AbortController());
    });
    if (PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (ok) {
        if (!ok || pending === false) return;
        pending = new AbortController();
        signIn("conditional", pending);
      });
    }
  }

  // Second-step page: "Use a passkey" (the code forms work without it).
  var step = document.getElementById("passkey-step");
  if (step) {
    var stepError = document.getElementById("passkey-error");
    var stepNext = document.querySelector('form[action="/signin/mfa"] input[name=next]');
    step.hidden = false;
    step.addEventListener("click", function () {
      show(stepError, "");
      post("/signin/mfa/passkey/begin").then(function (begun) {
        return navigator.credentials.get({ publicKey: requestOptions(begun.publicKey) }).then(function (cred) {
          return post("/signin/mfa/passkey", { ceremony_id: begun.ceremony_id, credential: credentialJSON(cred), next: stepNext ? stepNext.value : "" });
        });
      }).then(function (done) { window.location.assign(done.next || "/"); })
        .catch(function (err) { show(stepError, failed(err)); });
    });
  }

  // Reset page: the new password with a passkey as the second factor
  // (the code fields work without it).
  var reset = document.getElementById("passkey-reset");
  if (reset) {
    var resetError = document.getElementById("passkey-error");
    var tokenEl = document.querySelector('form[action="/reset-password"] input[name=token]');
    var pwEl = document.getElementById("new_password");
    reset.hidden = false;
    reset.addEventListener("click", function () {
      show(resetError, "");
      if (!pwEl.value) {
        show(resetError, say("passwordFirst", "Enter the new password first."));
        pwEl.focus();
        return;
      }
      post("/reset-password/passkey/begin", { token: tokenEl.value }).then(function (begun) {
        return navigator.credentials.get({ publicKey: requestOptions(begun.publicKey) }).then(function (cred) {
          return post("/reset-password/passkey", { token: tokenEl.value, new_password: pwEl.value, ceremony_id: begun.ceremony_id,
            credential: credentialJSON(cred) });
        });
      }).then(function (done) { window.location.assign(done.next || "/"); })
        .catch(function (err) { show(resetError, failed(err)); });
    });
  }

  // Account page: add a passkey, from its form or from the same form kept
  // across signing in again (the card "Finish what you started"). A
  // sign-in too old to add one posts the form: the page answers with
  // signing in again, then comes back here with the form ready.
  var addForm = document.getElementById("passkey-add-form");
  if (addForm) {
    var addError = document.getElementById("passkey-error");
    addForm.hidden = false;
    document.querySelectorAll('form[action="/account/passkeys/add"]').forEach(function (form) {
      form.addEventListener("submit", function (ev) {
        ev.preventDefault();
        show(addError, "");
        var name = form.elements.name ? form.elements.name.value : "";
        post("/account/passkeys/begin").then(function (begun) {
          return navigator.credentials.create({ publicKey: creationOptions(begun.publicKey) }).then(function (cred) {
            return post("/account/passkeys/finish", { ceremony_id: begun.ceremony_id, credential: credentialJSON(cred), name: name });
          });
        }).then(function () { window.location.assign("/account/passkeys"); })
          .catch(function (err) {
            if (err.code === "reauth_required") form.submit();
            else show(addError, failed(err));
          });
      });
    });
  }
})();
