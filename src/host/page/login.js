// The one-time link's page: trades the code in its address for a page session, keeps it in
// this origin's localStorage (scheme, address and port: a page of any other origin, another
// port of this address included, cannot read it), and opens the page. The session is never
// a cookie: browsers send cookies to every port of an address.
"use strict";
(() => {
  const msg = document.getElementById("msg");
  const code = new URLSearchParams(location.search).get("code") || "";
  // The code leaves the address bar and the history at once (it is spent anyway).
  history.replaceState(null, "", "/login");
  fetch("/session", { method: "POST", body: code, credentials: "omit", cache: "no-store" })
    .then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
    .then((j) => {
      localStorage.setItem("itmcp_page", j.session);
      location.replace("/");
    })
    .catch(() => {
      msg.textContent = "This sign-in link was already used or is not valid. Each link works once; the service printed a new one in its log when this one was used.";
    });
})();
