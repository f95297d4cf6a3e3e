// execgate's approvals page. Plain script, no library, no build step.
//
// It follows GET /v1/events (fetch and a small Server-Sent Events parser: EventSource
// cannot send the Authorization header), keeps the pending requests by id, shows them
// as cards in the corner, and sends the owner's answers to the admin API. Everything an
// agent wrote reaches the page as text (textContent), never as markup.
'use strict';

(() => {
  const TOKEN_KEY = 'execgate-token';
  // The server sends a comment every 15 s: this long without a byte, the stream is dead.
  const SILENCE_MS = 40000;
  const BACKOFF_FIRST_MS = 500;
  const BACKOFF_MAX_MS = 15000;
  const PAGE_SIZE = 50;
  const FEED_MAX = 30;

  const $ = (id) => document.getElementById(id);

  // ---- The token -------------------------------------------------------------------

  // The URL `execgate web url` prints carries the token in its fragment, which browsers
  // never send anywhere. It is kept for this tab only, and taken out of the address bar
  // (and so out of bookmarks and screen shares).
  function takeToken() {
    const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (match) {
      sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
      history.replaceState(null, '', location.pathname + location.search);
    }
    return sessionStorage.getItem(TOKEN_KEY);
  }

  let token = takeToken();
  let refused = false;

  function needToken(why) {
    refused = true;
    sessionStorage.removeItem(TOKEN_KEY);
    $('auth-why').textContent = why;
    $('auth').hidden = false;
    $('main').hidden = true;
    $('stack').hidden = true;
    setStatus('unauthorised', 'no access');
  }

  // ---- Text an agent wrote -----------------------------------------------------------

  // Every record and rule comes with `shown`: its text as every other front of execgate
  // shows it, made by the daemon, with what cannot be seen (controls, format and
  // invisible characters, blanks) as \u{…} escapes. The page displays that and keeps
  // no list of its own: what is approved is what was read, on every front alike.

  // What a request asks for: a label and the text.
  function asked(r) {
    return { label: r.shown.label, text: r.shown.text };
  }

  // One line of it, for lists.
  function askedLine(r) {
    return r.shown.line;
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  // ---- Time --------------------------------------------------------------------------

  // The daemon's clock, as far as its Date header tells (to the second): countdowns
  // count to the daemon's deadline, not to the browser's idea of it.
  let skewMs = 0;

  function noteServerDate(response) {
    const date = Date.parse(response.headers.get('Date') || '');
    if (!Number.isNaN(date)) {
      const skew = date - Date.now();
      // Only a difference the header's resolution cannot explain.
      skewMs = Math.abs(skew) > 1500 ? skew : 0;
    }
  }

  function now() {
    return Date.now() + skewMs;
  }

  function when(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    const today = new Date().toDateString() === d.toDateString();
    return today ? d.toLocaleTimeString() : d.toLocaleString();
  }

  function left(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = String(s % 60).padStart(2, '0');
    return h > 0 ? h + ':' + String(m).padStart(2, '0') + ':' + sec : m + ':' + sec;
  }

  // ---- The admin API -----------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function api(method, path, body) {
    const init = { method, headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (e) {
      throw new ApiError(0, 'OFFLINE', 'execgate cannot be reached (' + e.message + ')');
    }
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (e) {
      data = null;
    }
    if (response.status === 401) needToken('The token this page was opened with is not the daemon’s (it may have been made anew).');
    if (!response.ok) {
      const error = data && data.error ? data.error : {};
      throw new ApiError(response.status, error.code || '', error.message || 'execgate answered ' + response.status);
    }
    return data;
  }

  // ---- The connection ----------------------------------------------------------------

  function setStatus(state, text) {
    const status = $('status');
    status.dataset.state = state;
    status.textContent = text;
  }

  // A Server-Sent Events reader: lines, fields, and an event at each blank line.
  function sseParser(onEvent) {
    let buffer = '';
    let name = '';
    let data = [];
    function line(text) {
      if (text === '') {
        if (data.length > 0) onEvent(name || 'message', data.join('\n'));
        name = '';
        data = [];
        return;
      }
      if (text.startsWith(':')) return;
      const colon = text.indexOf(':');
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? '' : text.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') name = value;
      else if (field === 'data') data.push(value);
    }
    return (chunk) => {
      buffer += chunk;
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        // A lone \r at the end may be the first half of \r\n: wait for more.
        if (!match || (match[0] === '\r' && match.index === buffer.length - 1)) break;
        line(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
    };
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // How long to wait before the next try; back to the first step once a snapshot
  // arrives (a stream that is refused or ends at once keeps backing off).
  let backoff = BACKOFF_FIRST_MS;

  async function follow() {
    while (!refused) {
      const abort = new AbortController();
      let lastByte = Date.now();
      const watchdog = setInterval(() => {
        if (Date.now() - lastByte > SILENCE_MS) abort.abort();
      }, 5000);
      try {
        const response = await fetch('/v1/events', {
          headers: { Authorization: 'Bearer ' + token, Accept: 'text/event-stream' },
          cache: 'no-store',
          signal: abort.signal,
        });
        if (response.status === 401) {
          needToken('The token this page was opened with is not the daemon’s (it may have been made anew).');
          return;
        }
        if (!response.ok || !response.body) throw new Error('execgate answered ' + response.status);
        noteServerDate(response);
        const feed = sseParser(onEvent);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          lastByte = Date.now();
          feed(value);
        }
      } catch (e) {
        // Dropped, refused or silent: try again below.
      } finally {
        clearInterval(watchdog);
      }
      if (refused) return;
      setStatus('reconnecting', 'reconnecting…');
      await sleep(backoff + Math.random() * 250);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  function onEvent(name, text) {
    let data;
    try {
      data = JSON.parse(text);
    } catch (e) {
      return;
    }
    switch (name) {
      case 'snapshot':
        replacePending(data.pending || []);
        break;
      case 'pending':
        putPending(data);
        break;
      case 'resolved':
        resolved(data);
        break;
      case 'allowlist':
        if (loaded.allowlist) loadRules();
        break;
      case 'resync':
        // A fresh snapshot follows and replaces what is shown.
        setStatus('reconnecting', 'catching up…');
        break;
      case 'error':
        setStatus('reconnecting', 'execgate: ' + (data.message || 'error'));
        break;
      default:
        break;
    }
    if (name === 'snapshot') {
      backoff = BACKOFF_FIRST_MS;
      setStatus('live', 'live');
    }
  }

  // ---- Pending requests: the stack ---------------------------------------------------

  // Requests by id, with their card: a request may come in a snapshot and again in a
  // `pending` event.
  const pending = new Map();

  function replacePending(items) {
    const keep = new Set(items.map((item) => item.id));
    for (const id of [...pending.keys()]) {
      if (!keep.has(id)) removeCard(id);
    }
    for (const item of items) putPending(item);
  }

  function putPending(item) {
    if (!item || item.status !== 'pending') return;
    const existing = pending.get(item.id);
    const card = buildCard(item);
    if (existing) {
      existing.card.replaceWith(card);
    } else {
      placeCard(card, item);
    }
    pending.set(item.id, { item, card });
    tick();
    counted();
  }

  // Newest at the top, the oldest nearest the corner.
  function placeCard(card, item) {
    const cards = $('cards');
    for (const other of cards.children) {
      const entry = pending.get(other.dataset.id);
      if (entry && entry.item.created_at < item.created_at) {
        cards.insertBefore(card, other);
        return;
      }
    }
    cards.appendChild(card);
  }

  function removeCard(id) {
    const entry = pending.get(id);
    if (!entry) return;
    entry.card.remove();
    pending.delete(id);
    counted();
  }

  function counted() {
    const n = pending.size;
    $('stack-bar').hidden = n === 0;
    $('stack-count').textContent = n === 1 ? '1 request waiting' : n + ' requests waiting';
    const count = $('pending-count');
    count.textContent = String(n);
    count.classList.toggle('some', n > 0);
    $('pending-empty').hidden = n > 0;
    $('pending-some').hidden = n === 0;
    document.title = n > 0 ? '(' + n + ') execgate' : 'execgate';
  }

  function resolved(record) {
    removeCard(record.id);
    remember(record);
    if (loaded.history) refreshHistoryRow(record);
  }

  // How the kernel will hold a command execgate runs (the record's `confinement`, as
  // docs/decisions.md#confinement names it).
  function confinedText(word) {
    const net = word.endsWith('+network') ? 'network' : 'no network';
    switch (word.replace('+network', '')) {
      case 'harmless': return 'reads the project only · writes nothing · ' + net;
      case 'read-only': return 'read-only · ' + net;
      case 'workspace': return 'writes only in the project · ' + net;
      case 'project-work': return 'project work, confined: writes only in the project · ' + net;
      case 'none': return 'not confined';
      default: return word;
    }
  }

  function field(label, value, className) {
    const line = el('div', 'field' + (className ? ' ' + className : ''));
    line.appendChild(el('span', 'label', label));
    line.appendChild(el('span', 'value', value));
    return line;
  }

  const GRANT_TIMES = [
    ['', 'until removed'],
    ['1800', 'for 30 min'],
    ['7200', 'for 2 h'],
    ['86400', 'for 1 day'],
    ['604800', 'for 7 days'],
  ];

  function button(className, label, decision) {
    const node = el('button', className, label);
    node.type = 'button';
    node.dataset.decision = decision;
    return node;
  }

  function buildCard(r) {
    const card = el('article', 'card risk-' + r.risk);
    card.dataset.id = r.id;
    card.dataset.shortId = r.short_id;

    const head = el('div', 'card-head');
    head.appendChild(el('span', 'id mono', r.short_id));
    const agent = el('span', 'agent', r.shown.agent);
    head.appendChild(agent);
    if (r.peer_uid != null) head.appendChild(el('span', 'muted', 'uid ' + r.peer_uid));
    head.appendChild(el('span', 'pill ' + r.risk, r.risk));
    const countdown = el('span', 'countdown');
    countdown.dataset.expires = r.expires_at || '';
    head.appendChild(countdown);
    card.appendChild(head);

    const what = asked(r);
    if (what.label !== 'Command') card.appendChild(el('div', 'label', what.label));
    card.appendChild(el('pre', 'asked command', what.text));

    if (r.shown.cwd) card.appendChild(field('in', r.shown.cwd, 'mono'));
    if (r.shown.reason) card.appendChild(field('why', r.shown.reason));
    if (r.shown.session) card.appendChild(field('session', r.shown.session, 'mono'));
    card.appendChild(field('run', r.run ? 'execgate runs it itself, as its own user, once approved' : 'the agent runs it itself once approved'));
    if (r.run && r.confinement) card.appendChild(field('confined', confinedText(r.confinement)));
    if (r.shown.input) card.appendChild(field('input', r.shown.input));
    if (r.shown.risk_reasons.length > 0) {
      const list = el('ul', 'reasons');
      for (const reason of r.shown.risk_reasons) list.appendChild(el('li', null, reason));
      card.appendChild(list);
    }
    for (const note of r.shown.notes) card.appendChild(field('note', note));

    // Once or not at all first; then the grants that save a rule, where offered, with
    // how long the rule lasts.
    const offer = r.offer || {};
    const actions = el('div', 'actions');
    const answers = el('div', 'answers');
    answers.appendChild(button('allow', 'Allow once', 'allow-once'));
    answers.appendChild(button('deny', 'Deny', 'deny'));
    actions.appendChild(answers);
    const grants = [];
    if (!offer.session_refused) grants.push(button('grant', 'This session', 'allow-session'));
    if (!offer.always_refused) grants.push(button('grant', 'Always', 'allow-always'));
    let time = null;
    if (grants.length > 0) {
      const row = el('div', 'grants');
      for (const grant of grants) row.appendChild(grant);
      time = el('select', 'grant-time');
      time.title = 'How long the rule This session or Always saves lasts';
      time.setAttribute('aria-label', time.title);
      for (const [value, label] of GRANT_TIMES) {
        const option = el('option', null, label);
        option.value = value;
        time.appendChild(option);
      }
      row.appendChild(time);
      actions.appendChild(row);
    }
    card.appendChild(actions);

    // What a grant would save, so that a click is never a surprise; or why none is
    // offered.
    if (offer.always_refused) {
      card.appendChild(el('div', 'refused', 'Always and This session are not offered: ' + r.shown.always_refused));
    } else if (offer.rule) {
      const kind = offer.rule_kind === 'tool' ? 'a tool rule' : 'an exact rule';
      const saves = el('div', 'refused saves');
      saves.appendChild(document.createTextNode('Always saves ' + kind + ' for agent ' + r.shown.agent + ': '));
      saves.appendChild(el('code', null, r.shown.rule));
      if (!offer.session_refused && r.shown.session) {
        saves.appendChild(document.createTextNode('; This session saves it for session ' + r.shown.session + ' only'));
      }
      saves.appendChild(document.createTextNode('.'));
      card.appendChild(saves);
    }
    const error = el('div', 'card-error');
    error.hidden = true;
    card.appendChild(error);

    actions.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-decision]');
      if (button) decide(r, button.dataset.decision, time, card);
    });
    return card;
  }

  async function decide(r, decision, time, card) {
    const body = { decision };
    // Only grants last: a time makes their rule expire.
    if (time && time.value && (decision === 'allow-always' || decision === 'allow-session')) {
      body.for_secs = Number(time.value);
    }
    const buttons = card.querySelectorAll('button');
    const error = card.querySelector('.card-error');
    buttons.forEach((b) => (b.disabled = true));
    error.hidden = true;
    try {
      const record = await api('POST', '/v1/requests/' + encodeURIComponent(r.id) + '/decision', body);
      // The `resolved` event removes it too; whichever comes first.
      resolved(record);
    } catch (e) {
      error.textContent = e.message;
      error.hidden = false;
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  // Every second: each card's time left.
  function tick() {
    const t = now();
    for (const { card } of pending.values()) {
      const countdown = card.querySelector('.countdown');
      const expires = Date.parse(countdown.dataset.expires);
      if (Number.isNaN(expires)) {
        countdown.textContent = '';
        continue;
      }
      const ms = expires - t;
      countdown.textContent = ms > 0 ? left(ms) + ' left' : 'expiring…';
      countdown.classList.toggle('soon', ms < 30000);
    }
  }

  // ---- What was decided while the page was open --------------------------------------

  function outcome(r) {
    const parts = [r.status];
    if (r.decision) parts.push('(' + r.decision + ')');
    if (r.via) parts.push('via ' + r.via);
    if (r.shown.decided_by) parts.push('by ' + r.shown.decided_by);
    return parts.join(' ');
  }

  function remember(r) {
    const feed = $('feed');
    // The page's own answer and its `resolved` event tell the same thing.
    for (const seen of feed.children) {
      if (seen.dataset.id === r.id) return;
    }
    const item = el('li');
    item.dataset.id = r.id;
    item.appendChild(el('span', 'muted', when(r.resolved_at || r.created_at)));
    item.appendChild(el('span', 'mono', r.short_id));
    item.appendChild(el('span', null, r.shown.agent));
    item.appendChild(el('code', null, askedLine(r).slice(0, 160)));
    item.appendChild(el('span', 'pill ' + r.status, outcome(r)));
    feed.insertBefore(item, feed.firstChild);
    while (feed.children.length > FEED_MAX) feed.removeChild(feed.lastChild);
    $('feed-empty').hidden = true;
  }

  // ---- Tabs --------------------------------------------------------------------------

  const loaded = { history: false, allowlist: false };

  function show(view) {
    for (const tab of document.querySelectorAll('.tabs button')) {
      const selected = tab.dataset.view === view;
      tab.setAttribute('aria-selected', String(selected));
      $('view-' + tab.dataset.view).hidden = !selected;
    }
    if (view === 'history' && !loaded.history) loadHistory(false);
    if (view === 'allowlist' && !loaded.allowlist) loadRules();
  }

  // ---- History -----------------------------------------------------------------------

  const historyState = { last: null, agent: '', status: '' };

  function message(node, text, kind) {
    node.textContent = text;
    node.className = 'message' + (kind ? ' ' + kind : '');
    node.hidden = !text;
  }

  async function loadHistory(more) {
    const rows = $('history-rows');
    if (!more) {
      historyState.agent = $('history-agent').value.trim();
      historyState.status = $('history-status').value;
      historyState.last = null;
    }
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (historyState.agent) query.set('agent', historyState.agent);
    if (historyState.status) query.set('status', historyState.status);
    if (more && historyState.last) query.set('before', historyState.last);
    try {
      const list = await api('GET', '/v1/requests?' + query.toString());
      if (!more) clear(rows);
      for (const r of list) rows.appendChild(historyRow(r));
      historyState.last = list.length > 0 ? list[list.length - 1].id : historyState.last;
      $('history-more').hidden = list.length < PAGE_SIZE;
      $('history-end').hidden = list.length >= PAGE_SIZE || rows.children.length === 0;
      message($('history-message'), rows.children.length === 0 ? 'No requests match.' : '');
      loaded.history = true;
    } catch (e) {
      message($('history-message'), e.message, 'error');
    }
  }

  function historyRow(r) {
    const row = el('tr', 'row');
    row.dataset.id = r.id;
    row.appendChild(el('td', 'muted', when(r.created_at)));
    row.appendChild(el('td', 'mono', r.short_id));
    row.appendChild(el('td', null, r.shown.agent));
    const line = askedLine(r);
    row.appendChild(el('td', 'mono', line.length > 140 ? line.slice(0, 139) + '…' : line));
    const risk = el('td');
    risk.appendChild(el('span', 'pill ' + r.risk, r.risk));
    row.appendChild(risk);
    const status = el('td');
    status.appendChild(el('span', 'pill ' + r.status, outcome(r)));
    row.appendChild(status);
    row.addEventListener('click', () => toggleDetails(row, r));
    return row;
  }

  function toggleDetails(row, r) {
    const next = row.nextElementSibling;
    if (next && next.classList.contains('details')) {
      next.remove();
      return;
    }
    const details = el('tr', 'details');
    const cell = el('td');
    cell.colSpan = 6;
    const what = asked(r);
    cell.appendChild(el('div', 'label', what.label + ' · id ' + r.id));
    cell.appendChild(el('pre', 'asked', what.text));
    const facts = [
      ['in', r.shown.cwd],
      ['why', r.shown.reason],
      ['session', r.shown.session],
      ['front', r.shown.front],
      ['uid', r.peer_uid],
      ['input', r.shown.input],
      ['run', r.run ? 'by execgate' : 'by the agent'],
      ['decided', r.resolved_at ? when(r.resolved_at) : null],
      ['error', r.shown.error],
    ];
    for (const [label, value] of facts) {
      if (value !== null && value !== undefined && value !== '') cell.appendChild(field(label, String(value)));
    }
    if (r.result) {
      const res = r.result;
      cell.appendChild(
        field('result', 'exit ' + res.exit_code + (res.signal ? ', signal ' + res.signal : '') + (res.timed_out ? ', timed out' : '') + ', ' + res.duration_ms + ' ms'),
      );
    }
    for (const reason of r.shown.risk_reasons) cell.appendChild(field('risk', reason));
    for (const note of r.shown.notes) cell.appendChild(field('note', note));
    details.appendChild(cell);
    row.after(details);
  }

  // A request decided while its row is shown: the row says so.
  function refreshHistoryRow(r) {
    const row = document.querySelector('#history-rows tr.row[data-id="' + CSS.escape(r.id) + '"]');
    if (row) {
      const next = row.nextElementSibling;
      if (next && next.classList.contains('details')) next.remove();
      row.replaceWith(historyRow(r));
    }
  }

  // ---- The allowlist -----------------------------------------------------------------

  function scope(rule) {
    if (rule.agent && rule.session) return 'agent ' + rule.shown.agent + ', session ' + rule.shown.session;
    if (rule.agent) return 'agent ' + rule.shown.agent;
    return 'every agent';
  }

  async function loadRules() {
    try {
      const rules = await api('GET', '/v1/allowlist');
      const rows = $('rules-rows');
      clear(rows);
      for (const rule of rules) rows.appendChild(ruleRow(rule));
      $('rules-empty').hidden = rules.length > 0;
      loaded.allowlist = true;
    } catch (e) {
      message($('rule-message'), e.message, 'error');
    }
  }

  function ruleRow(rule) {
    const row = el('tr');
    row.dataset.ruleId = String(rule.id);
    row.appendChild(el('td', 'mono', String(rule.id)));
    row.appendChild(el('td', null, scope(rule)));
    row.appendChild(el('td', null, rule.kind));
    row.appendChild(el('td', 'mono pattern', rule.shown.pattern));
    const expired = rule.expires_at && Date.parse(rule.expires_at) <= now();
    // approval.remember = memory: the daemon also forgets it when it stops.
    const stops = rule.memory ? 'when execgate stops' : 'never';
    const expires = rule.expires_at
      ? (expired ? 'expired ' : '') + when(rule.expires_at) + (rule.memory ? ', or ' + stops : '')
      : stops;
    row.appendChild(el('td', expired ? 'muted' : null, expires));
    row.appendChild(el('td', null, String(rule.use_count)));
    const used = el('td');
    if (rule.last_used_at) {
      used.appendChild(el('div', null, when(rule.last_used_at)));
      if (rule.last_command) used.appendChild(el('div', 'mono muted', rule.shown.last_command.slice(0, 120)));
    } else {
      used.textContent = 'never';
    }
    row.appendChild(used);
    const made = el('td');
    made.appendChild(el('div', null, when(rule.created_at)));
    made.appendChild(el('div', 'muted', 'by ' + rule.shown.created_by + (rule.source_request ? ', answering a request' : '')));
    row.appendChild(made);
    const action = el('td');
    const remove = el('button', 'remove', 'Remove');
    remove.type = 'button';
    remove.addEventListener('click', () => confirmRemoval(action, rule));
    action.appendChild(remove);
    row.appendChild(action);
    return row;
  }

  // Removing asks once more, in place.
  function confirmRemoval(cell, rule) {
    clear(cell);
    cell.appendChild(el('div', 'muted', 'Remove rule #' + rule.id + '?'));
    const yes = el('button', 'confirm-remove', 'Remove');
    yes.type = 'button';
    const no = el('button', 'keep', 'Keep');
    no.type = 'button';
    cell.appendChild(yes);
    cell.appendChild(no);
    yes.addEventListener('click', async () => {
      yes.disabled = true;
      try {
        await api('DELETE', '/v1/allowlist/' + encodeURIComponent(String(rule.id)));
        message($('rule-message'), 'Removed rule #' + rule.id + '.');
        await loadRules();
      } catch (e) {
        message($('rule-message'), e.message, 'error');
        yes.disabled = false;
      }
    });
    no.addEventListener('click', () => loadRules());
  }

  async function addRule(event) {
    event.preventDefault();
    const pattern = $('rule-pattern').value;
    const agent = $('rule-agent').value.trim();
    const seconds = Number($('rule-expiry').value);
    const body = {
      pattern,
      kind: $('rule-kind').value,
      agent: agent || null,
      expires_at: seconds ? new Date(now() + seconds * 1000).toISOString() : null,
    };
    if (!$('rule-force-label').hidden && $('rule-force').checked) body.force = true;
    const button = $('rule-add');
    button.disabled = true;
    try {
      const added = await api('POST', '/v1/allowlist', body);
      const warnings = added.warnings || [];
      message(
        $('rule-message'),
        'Added rule #' + added.id + '.' + (warnings.length ? ' Note: ' + warnings.join(' ') : ''),
        warnings.length ? 'warning' : '',
      );
      $('rule-pattern').value = '';
      $('rule-force').checked = false;
      $('rule-force-label').hidden = true;
      await loadRules();
    } catch (e) {
      message($('rule-message'), e.message, 'error');
      if (e.code === 'TOO_BROAD') $('rule-force-label').hidden = false;
    } finally {
      button.disabled = false;
    }
  }

  // ---- Start -------------------------------------------------------------------------

  function start() {
    for (const tab of document.querySelectorAll('.tabs button')) {
      tab.addEventListener('click', () => show(tab.dataset.view));
    }
    $('history-form').addEventListener('submit', (event) => {
      event.preventDefault();
      loadHistory(false);
    });
    $('history-more').addEventListener('click', () => loadHistory(true));
    $('rule-form').addEventListener('submit', addRule);
    // On a small screen the stack covers the tabs: it folds away to its bar.
    $('stack-toggle').addEventListener('click', () => {
      const folded = $('stack').classList.toggle('folded');
      $('stack-toggle').textContent = folded ? 'Show' : 'Hide';
      $('stack-toggle').setAttribute('aria-expanded', String(!folded));
    });
    // A URL with a token opened in this tab again (a new token, say) starts afresh.
    window.addEventListener('hashchange', () => {
      if (/(?:^#|&)token=/.test(location.hash)) location.reload();
    });
    counted();
    if (!token) {
      needToken('No token was given: this address was opened without one.');
      return;
    }
    setInterval(tick, 1000);
    follow();
  }

  start();
})();
