import { api, token } from './api.js';
import { h, show } from './dom.js';
import { auditView } from './views/audit.js';
import { deadView } from './views/dead.js';
import { messageView } from './views/message.js';
import { overviewView } from './views/overview.js';
import { threadView } from './views/thread.js';
import { threadsView } from './views/threads.js';
import { workersView } from './views/workers.js';

// The console: one page, routed by the URL's fragment (#/threads?state=running, #/thread/<id>, ...).
// Each view renders into <main> and returns what stops it (a live refresh) when the route changes.

const routes = [
  [/^\/$/, () => overviewView],
  [/^\/threads$/, () => threadsView],
  [/^\/thread\/(.+)$/, (m) => (main) => threadView(main, decodeURIComponent(m[1]))],
  [/^\/dead-letters$/, () => (main, query) => deadView(main, 'dead-letters', query)],
  [/^\/dead-replies$/, () => (main, query) => deadView(main, 'dead-replies', query)],
  [/^\/workers$/, () => workersView],
  [/^\/audit$/, () => auditView],
  [/^\/message\/(.+)$/, (m) => (main) => messageView(main, decodeURIComponent(m[1]))],
];

const main = document.getElementById('view');
let stop = () => {};

async function route() {
  stop();
  stop = () => {};
  if (!token.get()) return signIn();
  const [path, search = ''] = location.hash.replace(/^#/, '').split('?');
  const query = new URLSearchParams(search);
  for (const [pattern, view] of routes) {
    const match = pattern.exec(path || '/');
    if (!match) continue;
    for (const a of document.querySelectorAll('header nav a')) {
      a.classList.toggle('active', a.getAttribute('href') === `#${path || '/'}`);
    }
    try {
      stop = (await view(match)(main, query)) ?? (() => {});
    } catch (error) {
      show(main, h('p', { class: 'error' }, error.message));
    }
    return;
  }
  show(main, h('p', { class: 'error' }, `No page ${path}.`));
}

/** Asks for an admin token; it lives in this tab's sessionStorage only. */
function signIn(message) {
  document.getElementById('who').textContent = '';
  const input = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'off',
    'aria-label': 'admin token',
  });
  const form = h(
    'form',
    {
      class: 'login',
      onsubmit: async (event) => {
        event.preventDefault();
        token.set(input.value.trim());
        try {
          await whoami();
          await route();
        } catch (error) {
          token.clear();
          signIn(error.message);
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'An admin token (ADMIN_TOKENS or ADMIN_TOKEN). It is kept in this tab only.'),
    input,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    message ? h('p', { class: 'error' }, message) : null,
  );
  show(main, form);
  input.focus();
}

async function whoami() {
  const me = await api('/whoami');
  document.getElementById('who').textContent = `${me.name} (${me.role})`;
}

document.getElementById('search').addEventListener('submit', (event) => {
  event.preventDefault();
  const id = new FormData(event.target).get('messageId').toString().trim();
  if (id) location.hash = `#/message/${encodeURIComponent(id)}`;
});
window.addEventListener('hashchange', route);
window.addEventListener('tributary:signed-out', () => signIn('The token was refused; sign in again.'));
if (token.get()) whoami().catch(() => {});
route();
