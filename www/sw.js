// Offline copy of the page: every file of the site is cached on install (the list and the
// version are written in by scripts/build-web.sh), then served from the cache first. Only this
// site's own files are ever fetched.
'use strict';

const VERSION = '__VERSION__';
const FILES = __FILES__;
const CACHE = `prvsight-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(FILES))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('prvsight-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== self.location.origin) return;
  event.respondWith(
    caches.open(CACHE).then((cache) =>
      // ignoreSearch: index.html?embed is the same file.
      cache.match(req, { ignoreSearch: true }).then((hit) => hit || fetch(req)),
    ),
  );
});
