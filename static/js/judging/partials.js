// Fill every [data-src] element with the server-rendered partial at that URL (the agreement figure is voting's).
for (const slot of document.querySelectorAll("[data-src]")) {
  fetch(slot.dataset.src, { credentials: "same-origin" })
    .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
    .then((html) => { slot.innerHTML = html; })
    .catch(() => { slot.textContent = "Could not load this figure; reload the page to try again."; });
}
