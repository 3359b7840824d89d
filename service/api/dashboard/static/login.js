// Log in: trade the API key for the httponly session cookie (POST /v1/session), then go on.
import { api, errorText } from "./common.js";

const form = document.getElementById("login-form");
const error = document.getElementById("login-error");
const button = document.getElementById("login-submit");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.hidden = true;
  button.disabled = true;
  try {
    await api("/v1/session", { method: "POST", body: { api_key: document.getElementById("api-key").value.trim() } });
    const next = form.dataset.next || "/";
    window.location.assign(next.startsWith("/") && !next.startsWith("//") ? next : "/");
  } catch (e) {
    error.textContent = e.status === 401 ? "That key is not valid (or it was revoked)." : `Could not log in: ${errorText(e)}`;
    error.hidden = false;
    button.disabled = false;
  }
});
