// <prvsight-converter>: drops the converter into another page (training material, a wiki).
// It is an iframe onto this site's index.html, so the converter keeps its own strict
// Content-Security-Policy and its worker, whatever the host page allows. Usage in EMBED.md.
// A classic script, not a module: hosts on another origin can load it without CORS headers.
(() => {
'use strict';

const here = new URL('.', document.currentScript.src);

class PrvsightConverter extends HTMLElement {
  connectedCallback() {
    if (this.frame) return;
    const frame = document.createElement('iframe');
    frame.src = new URL('index.html?embed', here).href;
    frame.title = this.getAttribute('title') || 'prvsight: convert Nsight Systems exports to Paraver, in this browser';
    frame.loading = 'lazy';
    frame.style.width = '100%';
    frame.style.border = '0';
    frame.style.height = `${Number(this.getAttribute('height')) || 720}px`;
    this.frame = frame;
    this.onMessage = (ev) => {
      // Only our own frame may resize us.
      if (ev.source !== frame.contentWindow || !ev.data || typeof ev.data.prvsightHeight !== 'number') return;
      if (!this.hasAttribute('height')) frame.style.height = `${Math.ceil(ev.data.prvsightHeight) + 4}px`;
    };
    window.addEventListener('message', this.onMessage);
    this.append(frame);
  }

  disconnectedCallback() {
    window.removeEventListener('message', this.onMessage);
    if (this.frame) this.frame.remove();
    this.frame = null;
  }
}

if (!customElements.get('prvsight-converter')) customElements.define('prvsight-converter', PrvsightConverter);
})();
