// Personal signing keys (R28), WebAuthn in the browser: binary fields travel as base64url.
//
// « Signer avec ma clé » (button[data-passkey-sign]): the form is posted with sign_options=1, the server answers the
// challenge of the act the form describes (SHA-256 of its canonical statement and a single-use nonce), the signer's
// authenticator signs it (navigator.credentials.get, user verification), and the form is sent with the assertion.
// Where several people sign the act (a final count, R20), each touches their own key in turn on the same tablet.
// « Enrôler une clé » (button[data-passkey-enrol]): the same with navigator.credentials.create.
(function () {
  "use strict";

  function decode(text) {
    const base64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
    return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  }

  function encode(buffer) {
    let binary = "";
    new Uint8Array(buffer).forEach((byte) => { binary += String.fromCharCode(byte); });
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function status(button, text) {
    const place = button.parentElement.querySelector(".passkey-status");
    if (place) place.textContent = text;
  }

  async function ask(form, field) {
    const data = new FormData(form);
    data.set(field, "1");
    const response = await fetch(form.action || window.location.href, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    const body = await response.json();
    if (!response.ok) throw new Error(body.message || "Refusé");
    return body;
  }

  function send(form, button, name, value) {
    for (const [key, val] of [[name, value], [button.dataset.submitName, button.dataset.submitValue]]) {
      if (!key) continue;
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = key;
      input.value = val;
      form.appendChild(input);
    }
    form.submit();
  }

  // The next click on the button: each person touches their key after pressing it themselves (user activation).
  function nextClick(button) {
    return new Promise((resolve) => button.addEventListener("click", resolve, { once: true }));
  }

  async function answer(step) {
    const publicKey = step.publicKey;
    publicKey.challenge = decode(publicKey.challenge);
    (publicKey.allowCredentials || []).forEach((c) => { c.id = decode(c.id); });
    const credential = await navigator.credentials.get({ publicKey });
    return {
      nonce: step.nonce,
      credential: {
        id: credential.id,
        rawId: encode(credential.rawId),
        type: credential.type,
        response: {
          clientDataJSON: encode(credential.response.clientDataJSON),
          authenticatorData: encode(credential.response.authenticatorData),
          signature: encode(credential.response.signature),
          userHandle: credential.response.userHandle ? encode(credential.response.userHandle) : null,
        },
        clientExtensionResults: credential.getClientExtensionResults(),
      },
    };
  }

  // An act one person signs: one challenge. An act each person present signs (a final count: the croupier, the
  // caissier, then the director, R20): `signatures`, one challenge each, answered in turn on the same tablet.
  async function sign(button) {
    const form = button.form;
    const label = button.textContent;
    status(button, "Préparation de la signature…");
    const options = await ask(form, "sign_options");
    const steps = options.signatures || [{ ...options, field: "assertion" }];
    for (const [index, step] of steps.entries()) {
      if (index > 0) {
        button.textContent = `Signer avec la clé de ${step.signer}`;
        button.disabled = false;
        status(button, `${step.who} (${step.signer}) : appuyez sur le bouton puis touchez votre clé.`);
        await nextClick(button);
        button.disabled = true;
      }
      const who = steps.length > 1 ? `${step.who} (${step.signer}) : ` : "";
      status(button, `${who}touchez votre clé et saisissez son code PIN…`);
      form.querySelector(`[name=${step.field}]`).value = JSON.stringify(await answer(step));
    }
    button.textContent = label;
    status(button, "Signature faite, envoi…");
    send(form, button);
  }

  async function enrol(button) {
    const form = button.form;
    status(button, "Touchez votre clé et choisissez son code PIN…");
    const options = await ask(form, "register_options");
    const publicKey = options.publicKey;
    publicKey.challenge = decode(publicKey.challenge);
    publicKey.user.id = decode(publicKey.user.id);
    (publicKey.excludeCredentials || []).forEach((c) => { c.id = decode(c.id); });
    const credential = await navigator.credentials.create({ publicKey });
    const response = credential.response;
    form.querySelector("[name=nonce]").value = options.nonce;
    form.querySelector("[name=credential]").value = JSON.stringify({
      id: credential.id,
      rawId: encode(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: encode(response.clientDataJSON),
        attestationObject: encode(response.attestationObject),
        transports: response.getTransports ? response.getTransports() : [],
      },
      clientExtensionResults: credential.getClientExtensionResults(),
    });
    status(button, "Clé enregistrée, envoi…");
    send(form, button, "enrol", "1");
  }

  function wire(selector, action) {
    document.querySelectorAll(selector).forEach((button) => {
      const label = button.textContent;
      button.addEventListener("click", () => {
        // A signature under way waits for the next person's click itself (sign): no second one starts.
        if (button.dataset.busy) return;
        if (!window.PublicKeyCredential) {
          status(button, "Ce navigateur ne sait pas utiliser de clé de signature (WebAuthn).");
          return;
        }
        button.disabled = true;
        button.dataset.busy = "1";
        action(button).catch((error) => {
          delete button.dataset.busy;
          button.disabled = false;
          button.textContent = label;
          status(button, `Signature non faite : ${error.message}`);
        });
      });
    });
  }

  wire("[data-passkey-sign]", sign);
  wire("[data-passkey-enrol]", enrol);
})();
