// Interactive part of report.html. Reads the report from the embedded
// <script type="application/json" id="report-data">, renders the check list,
// filters it, and renders a check's details only when it is first expanded.
// All report text goes through textContent: nothing from the target is parsed as HTML.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var checks = data.checks;
  var list = document.getElementById('check-list');
  var countEl = document.getElementById('check-count');
  var search = document.getElementById('check-search');
  var areaSelect = document.getElementById('check-area');
  var state = { outcomes: { pass: true, fail: true, error: true, skip: true, observation: true }, area: '', q: '' };
  var rows = [];
  var indexById = new Map();

  // Control characters (other than tab and newline) are shown as \uXXXX rather than as boxes.
  function visible(text) {
    return String(text).replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, function (ch) {
      return '\\u' + ('000' + ch.charCodeAt(0).toString(16)).slice(-4);
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = visible(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function show(value) {
    if (value === undefined) return '';
    if (typeof value === 'string') return value;
    return JSON.stringify(value, null, 2);
  }
  function duration(ms) {
    if (typeof ms !== 'number' || !isFinite(ms)) return '';
    return ms < 1000 ? Math.round(ms) + ' ms' : (ms / 1000).toFixed(1) + ' s';
  }
  function prettyBody(body, headers) {
    if (body === undefined || body === '') return '';
    var type = (headers && (headers['content-type'] || headers['Content-Type'])) || '';
    var trimmed = body.trim();
    if (/json/i.test(type) || trimmed.charAt(0) === '{' || trimmed.charAt(0) === '[') {
      try { return JSON.stringify(JSON.parse(body), null, 2); } catch (e) { return body; }
    }
    return body;
  }

  function copyText(text, button) {
    function done(ok) {
      button.textContent = ok ? 'Copied' : 'Select and copy';
      setTimeout(function () { button.textContent = 'Copy'; }, 1500);
    }
    function fallback() {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
      document.body.removeChild(area);
      done(ok);
    }
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
    else fallback();
  }
  function curlBlock(curl) {
    var box = el('div', 'curl');
    var button = el('button', 'copy', 'Copy');
    button.type = 'button';
    button.addEventListener('click', function () { copyText(curl, button); });
    return add(box, button, el('pre', null, curl));
  }
  function keyValues(obj) {
    var table = el('table', 'kv');
    Object.keys(obj || {}).forEach(function (k) {
      var tr = el('tr');
      add(tr, el('td', null, k), el('td', null, obj[k]));
      table.appendChild(tr);
    });
    return table;
  }
  function sideBySide(expected, actual) {
    if (expected === undefined && actual === undefined) return null;
    var grid = el('div', 'side');
    add(grid,
      add(el('div'), el('h4', null, 'Expected'), el('pre', null, show(expected))),
      add(el('div'), el('h4', null, 'Actual'), el('pre', null, show(actual))));
    return grid;
  }

  function exchangeView(x, open) {
    var d = el('details', 'xchg');
    d.id = 'x-' + x.id;
    d.open = open;
    var summary = el('summary');
    var status = x.response ? x.response.status : 0;
    add(summary,
      el('span', null, x.id + '  ' + x.request.method + ' ' + x.request.url + '  → '),
      el('span', 'status s' + String(status).charAt(0), x.response ? String(status) : (x.error || 'no response')),
      el('span', 'muted', '  ' + duration(x.durationMs) + (x.client ? '  client ' + x.client : '')));
    d.appendChild(summary);
    var inner = el('div', 'inner');
    add(inner, el('h4', null, 'Request'), keyValues(x.request.headers));
    if (x.request.body !== undefined) add(inner, el('pre', null, prettyBody(x.request.body, x.request.headers)));
    if (x.request.bodyTruncated) add(inner, el('div', 'muted small', 'Request body truncated.'));
    if (x.response) {
      add(inner, el('h4', null, 'Response ' + x.response.status + ' (' + x.response.bodyBytes + ' bytes)'), keyValues(x.response.headers));
      if (x.response.body !== undefined) add(inner, el('pre', null, prettyBody(x.response.body, x.response.headers)));
      if (x.response.bodyTruncated) add(inner, el('div', 'muted small', 'Response body truncated at the recording cap.'));
    }
    if (x.error) add(inner, el('h4', null, 'Error'), el('pre', null, x.error));
    add(inner, el('h4', null, 'Reproduce'), curlBlock(x.curl));
    d.appendChild(inner);
    return d;
  }

  function details(c) {
    var body = el('div', 'check-body');
    if (c.message) body.appendChild(el('div', 'msg', c.message));
    var meta = el('div', 'meta');
    add(meta,
      el('span', null, 'Level: ' + c.level),
      el('span', null, 'Requirements: ' + (c.requirements.length ? c.requirements.join(', ') : 'none')),
      el('span', null, 'Started: ' + c.startedAt),
      el('span', null, 'Duration: ' + duration(c.durationMs)));
    body.appendChild(meta);
    add(body, sideBySide(c.expected, c.actual));
    if (c.findings.length) {
      body.appendChild(el('h3', null, 'Findings (' + c.findings.length + ')'));
      c.findings.forEach(function (f) {
        var box = el('div', 'finding');
        add(box, el('div', 'msg', f.message));
        var fm = el('div', 'meta');
        if (f.requirement) fm.appendChild(el('span', null, 'Requirement: ' + f.requirement));
        if (f.exchange) {
          var jump = el('button', 'link', 'exchange ' + f.exchange);
          jump.type = 'button';
          jump.addEventListener('click', function () {
            var target = document.getElementById('x-' + f.exchange);
            if (target) { target.open = true; target.scrollIntoView({ block: 'center' }); }
          });
          fm.appendChild(jump);
        }
        if (fm.childNodes.length) box.appendChild(fm);
        add(box, sideBySide(f.expected, f.actual));
        body.appendChild(box);
      });
    }
    if (c.observations.length) {
      body.appendChild(el('h3', null, 'Observed'));
      var table = el('table', 'kv');
      c.observations.forEach(function (o) {
        var tr = el('tr');
        add(tr, el('td', null, o.key), add(el('td'), el('pre', null, show(o.value)), o.note ? el('div', 'muted', o.note) : null));
        table.appendChild(tr);
      });
      body.appendChild(table);
    }
    if (c.curl) add(body, el('h3', null, 'Reproduce'), curlBlock(c.curl));
    if (c.evidence.length) {
      var cited = {};
      c.findings.forEach(function (f) { if (f.exchange) cited[f.exchange] = true; });
      var bad = c.outcome === 'fail' || c.outcome === 'error';
      body.appendChild(el('h3', null, 'Evidence (' + c.evidence.length + ' exchange' + (c.evidence.length === 1 ? '' : 's') + ')'));
      c.evidence.forEach(function (x, i) {
        var open = bad && (cited[x.id] || (i === c.evidence.length - 1 && Object.keys(cited).length === 0));
        body.appendChild(exchangeView(x, open));
      });
    }
    return body;
  }

  function setExpanded(row, expanded) {
    if (expanded && !row.body) {
      row.body = details(row.check);
      row.el.appendChild(row.body);
    }
    if (row.body) row.body.hidden = !expanded;
    row.el.setAttribute('aria-expanded', String(expanded));
    row.head.setAttribute('aria-expanded', String(expanded));
  }

  function renderRows() {
    var frag = document.createDocumentFragment();
    checks.forEach(function (c, i) {
      var wrap = el('div', 'check o-' + c.outcome);
      wrap.setAttribute('data-outcome', c.outcome);
      var head = el('button', 'check-head');
      head.type = 'button';
      var title = add(el('span', 'ctitle', c.title), c.requirements.length ? el('span', 'creqs', c.requirements.join(' ')) : null);
      add(head,
        add(el('span'), el('span', 'badge o-' + c.outcome, c.outcome)),
        el('span', 'cid', c.id), title, el('span', 'carea', c.area), el('span', 'cdur', duration(c.durationMs)),
        c.message ? el('span', 'cmsg', c.message) : null);
      wrap.appendChild(head);
      var row = { check: c, el: wrap, head: head, body: null,
        text: [c.id, c.title, c.area, c.message || '', c.requirements.join(' ')].join('\n').toLowerCase() };
      head.addEventListener('click', function () { setExpanded(row, wrap.getAttribute('aria-expanded') !== 'true'); });
      rows.push(row);
      indexById.set(c.id, i);
      frag.appendChild(wrap);
      setExpanded(row, c.outcome === 'fail' || c.outcome === 'error');
    });
    list.textContent = '';
    list.appendChild(frag);
  }

  function applyFilters() {
    var shown = 0;
    rows.forEach(function (row) {
      var c = row.check;
      var visible = state.outcomes[c.outcome] && (!state.area || c.area === state.area) && (!state.q || row.text.indexOf(state.q) !== -1);
      row.el.hidden = !visible;
      if (visible) shown++;
    });
    countEl.textContent = 'Showing ' + shown + ' of ' + rows.length + ' checks';
    document.getElementById('check-empty').hidden = shown !== 0;
    document.querySelectorAll('.chip[data-outcome]').forEach(function (chip) {
      chip.setAttribute('aria-pressed', String(!!state.outcomes[chip.getAttribute('data-outcome')]));
    });
    areaSelect.value = state.area;
  }

  function onlyOutcome(outcome) {
    Object.keys(state.outcomes).forEach(function (o) { state.outcomes[o] = !outcome || o === outcome; });
  }

  function reveal(id) {
    var i = indexById.get(id);
    if (i === undefined) return;
    var row = rows[i];
    if (row.el.hidden) { onlyOutcome(null); state.area = ''; state.q = ''; search.value = ''; applyFilters(); }
    setExpanded(row, true);
    row.el.scrollIntoView({ block: 'start' });
  }

  document.addEventListener('click', function (event) {
    var target = event.target.closest('[data-filter-outcome], [data-filter-area], [data-check], .chip[data-outcome], [data-action]');
    if (!target) return;
    if (target.hasAttribute('data-check')) { reveal(target.getAttribute('data-check')); return; }
    if (target.classList.contains('chip')) {
      var o = target.getAttribute('data-outcome');
      state.outcomes[o] = !state.outcomes[o];
    } else if (target.hasAttribute('data-filter-outcome')) {
      onlyOutcome(target.getAttribute('data-filter-outcome') || null);
      document.getElementById('checks').scrollIntoView();
    } else if (target.hasAttribute('data-filter-area')) {
      state.area = target.getAttribute('data-filter-area');
      document.getElementById('checks').scrollIntoView();
    } else if (target.getAttribute('data-action') === 'reset') {
      onlyOutcome(null); state.area = ''; state.q = ''; search.value = '';
    } else {
      var expand = target.getAttribute('data-action') === 'expand';
      rows.forEach(function (row) { if (!row.el.hidden) setExpanded(row, expand); });
      return;
    }
    applyFilters();
  });
  areaSelect.addEventListener('change', function () { state.area = areaSelect.value; applyFilters(); });
  var pending;
  search.addEventListener('input', function () {
    clearTimeout(pending);
    pending = setTimeout(function () { state.q = search.value.trim().toLowerCase(); applyFilters(); }, 120);
  });
  window.addEventListener('beforeprint', function () { rows.forEach(function (row) { if (!row.el.hidden) setExpanded(row, true); }); });

  renderRows();
  applyFilters();
  var hash = decodeURIComponent(location.hash.slice(1));
  if (hash.indexOf('check=') === 0) reveal(hash.slice(6));
  document.body.setAttribute('data-ready', 'true');
})();
