// Interactive part of report.html. Reads the checks and their evidence from the embedded
// <script type="application/json" id="report-data">, lists the checks (failures first),
// filters them, renders a check's details only when it is first expanded, and follows
// deep links (#check-<id>; the requirement rows are #req-<id>).
// All report text goes through textContent: nothing from the target is parsed as HTML.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var checks = data.checks;
  var exchanges = data.exchanges || {};
  var bodies = data.bodies || {};
  // The run timeline (report.json's `timeline`): a timing check links to the stretch it rests on.
  var timelineEl = document.getElementById('timeline-data');
  var timeline = timelineEl ? JSON.parse(timelineEl.textContent) : null;
  var list = document.getElementById('check-list');
  var countEl = document.getElementById('check-count');
  var search = document.getElementById('check-search');
  var areaSelect = document.getElementById('check-area');
  // Outcomes selected with the chips; none selected shows every outcome.
  var state = { outcomes: {}, area: '', q: '' };
  var RANK = { fail: 0, error: 1, skip: 2, pass: 3, observation: 3 };
  var rows = [];
  var rowById = new Map();

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
  function prettyBody(body, headers, truncated) {
    if (body === undefined || body === '') return '';
    var type = (headers && (headers['content-type'] || headers['Content-Type'])) || '';
    var trimmed = body.trim();
    if (/json/i.test(type) || trimmed.charAt(0) === '{' || trimmed.charAt(0) === '[') {
      try { return JSON.stringify(JSON.parse(body), null, 2); } catch (e) { return truncated ? indentJson(body) : body; }
    }
    return body;
  }
  // Indents the JSON of a body cut in the evidence (it no longer parses): two spaces per open
  // bracket, a line per member. Only whitespace outside strings changes.
  function indentJson(text) {
    var out = '';
    var depth = 0;
    var inString = false;
    var pad = function () { return '\n' + new Array(depth + 1).join('  '); };
    for (var i = 0; i < text.length; i++) {
      var ch = text.charAt(i);
      if (inString) {
        out += ch;
        if (ch === '\\') { out += text.charAt(++i); } else if (ch === '"') inString = false;
      } else if (ch === '"') { out += ch; inString = true; }
      else if (ch === '{' || ch === '[') {
        var close = ch === '{' ? '}' : ']';
        var j = i + 1;
        while (j < text.length && /\s/.test(text.charAt(j))) j++;
        if (text.charAt(j) === close) { out += ch + close; i = j; } else { depth++; out += ch + pad(); }
      }
      else if (ch === '}' || ch === ']') { depth = Math.max(0, depth - 1); out += pad() + ch; }
      else if (ch === ',') out += ch + pad();
      else if (ch === ':') out += ': ';
      else if (!/\s/.test(ch)) out += ch;
    }
    return out;
  }

  // Evidence as report.json stores it (src/report/evidence.ts): bodies of 1 KiB or more are in
  // `bodies` by hash; a curl left out is the one rebuilt from the request, exactly as
  // curlCommand() in src/http/evidence.ts builds it.
  function bodyOf(part) {
    if (part.body !== undefined) return part.body;
    return part.bodyRef === undefined ? undefined : bodies[part.bodyRef];
  }
  function shellQuote(s) {
    return "'" + s.replace(/'/g, "'\\''") + "'";
  }
  function curlCommand(req, body, truncated) {
    var parts = ['curl', '-sS', '-i', '-X', req.method, shellQuote(req.url)];
    Object.keys(req.headers).forEach(function (name) {
      var value = req.headers[name];
      if (name === 'content-length' || name === 'host') return;
      if (name === 'authorization' && /^[A-Za-z]+ \$TOKEN$/.test(value)) parts.push('-H', '"' + name + ': ' + value + '"');
      else parts.push('-H', shellQuote(name + ': ' + value));
    });
    if (body !== undefined) parts.push('--data-binary', shellQuote(body));
    var cmd = parts.join(' ');
    return body !== undefined && truncated ? cmd + '  # request body truncated in evidence' : cmd;
  }
  function curlOf(x) {
    return x.curl !== undefined ? x.curl : curlCommand(x.request, bodyOf(x.request), !!x.request.bodyTruncated);
  }
  function checkCurlCommand(c) {
    if (c.curl !== undefined) return c.curl;
    var x = c.curlExchange === undefined ? undefined : exchanges[c.curlExchange];
    return x ? curlOf(x) : undefined;
  }

  function copyText(text, button, label) {
    function done(ok) {
      button.textContent = ok ? 'Copied' : 'Select and copy';
      setTimeout(function () { button.textContent = label; }, 1500);
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
    button.addEventListener('click', function () { copyText(curl, button, 'Copy'); });
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
    function value(v) { return v === undefined ? el('pre', 'muted', '(none)') : el('pre', null, show(v)); }
    add(grid,
      add(el('div'), el('h4', null, 'Expected'), value(expected)),
      add(el('div'), el('h4', null, 'Actual'), value(actual)));
    return grid;
  }
  function linkTo(hash) {
    return location.href.split('#')[0] + hash;
  }
  function checkHash(id) {
    return '#check-' + encodeURIComponent(id);
  }

  // #timeline?from=<s>&to=<s>&key=<lanes>&check=<id>, as timelineHash() in src/report/html.ts builds it.
  function timelineLink(c) {
    var span = timeline && timeline.checks && Object.prototype.hasOwnProperty.call(timeline.checks, c.id) ? timeline.checks[c.id] : null;
    if (!span) return null;
    var sec = function (ms) { return String(Math.round(ms / 100) / 10); };
    var lanes = span.lanes.map(function (i) { return timeline.lanes[i] ? timeline.lanes[i].name : String(i); });
    var a = el('a', 'tl-link', 'On the timeline: ' + duration(span.to - span.from) + (lanes.length ? ' on ' + lanes.join(', ') : ''));
    a.href = '#timeline?from=' + sec(span.from) + '&to=' + sec(span.to) +
      (lanes.length ? '&key=' + lanes.map(encodeURIComponent).join(',') : '') + '&check=' + encodeURIComponent(c.id);
    a.title = 'Zoom the run timeline to the stretch this verdict rests on';
    return a;
  }

  function exchangeView(x, open) {
    var d = el('details', 'xchg');
    d.setAttribute('data-exchange', x.id);
    d.open = open;
    var summary = el('summary');
    var status = x.response ? x.response.status : 0;
    add(summary,
      el('span', null, x.id + '  ' + x.request.method + ' ' + x.request.url + '  → '),
      el('span', 'status s' + String(status).charAt(0), x.response ? String(status) : (x.error || 'no response')),
      el('span', 'muted', '  ' + duration(x.durationMs) + (x.client ? '  client ' + x.client : '')));
    d.appendChild(summary);
    var inner = el('div', 'inner');
    var requestBody = bodyOf(x.request);
    add(inner, el('h4', null, 'Request'), keyValues(x.request.headers));
    if (requestBody !== undefined) add(inner, el('pre', null, prettyBody(requestBody, x.request.headers, x.request.bodyTruncated)));
    if (x.request.bodyTruncated) add(inner, el('div', 'muted small', 'Request body truncated in the evidence.'));
    if (x.response) {
      var responseBody = bodyOf(x.response);
      add(inner, el('h4', null, 'Response ' + x.response.status + ' (' + x.response.bodyBytes + ' bytes)'), keyValues(x.response.headers));
      if (responseBody !== undefined) add(inner, el('pre', null, prettyBody(responseBody, x.response.headers, x.response.bodyTruncated)));
      if (x.response.bodyTruncated) {
        add(inner, el('div', 'muted small', 'Response body truncated in the evidence' +
          (responseBody !== undefined ? ': the first ' + responseBody.length + ' characters are kept.' : '.')));
      }
    }
    if (x.error) add(inner, el('h4', null, 'Error'), el('pre', null, x.error));
    add(inner, el('h4', null, 'Reproduce'), curlBlock(curlOf(x)));
    d.appendChild(inner);
    return d;
  }

  function details(c) {
    var body = el('div', 'check-body');
    if (c.message) body.appendChild(el('div', 'msg', c.message));
    var meta = el('div', 'meta');
    var copy = el('button', 'link copy-link', 'Copy link');
    copy.type = 'button';
    copy.title = 'Copy a link that opens this check';
    copy.addEventListener('click', function () { copyText(linkTo(checkHash(c.id)), copy, 'Copy link'); });
    add(meta,
      el('span', null, 'Level: ' + c.level),
      el('span', null, 'Requirements: ' + (c.requirements.length ? c.requirements.join(', ') : 'none')),
      el('span', null, 'Started: ' + c.startedAt),
      el('span', null, 'Duration: ' + duration(c.durationMs)),
      timelineLink(c),
      copy);
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
            var target = body.querySelector('details[data-exchange="' + CSS.escape(f.exchange) + '"]');
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
    var curl = checkCurlCommand(c);
    if (curl) add(body, el('h3', null, 'Reproduce'), curlBlock(curl));
    var evidence = c.evidence.map(function (id) { return exchanges[id]; }).filter(Boolean);
    if (evidence.length) {
      var cited = {};
      c.findings.forEach(function (f) { if (f.exchange) cited[f.exchange] = true; });
      var bad = c.outcome === 'fail' || c.outcome === 'error';
      add(body, add(el('h3', null, 'Evidence (' + evidence.length + ' exchange' + (evidence.length === 1 ? '' : 's') + ')'), timelineLink(c) ? el('span', 'muted', ' · ') : null, timelineLink(c)));
      evidence.forEach(function (x, i) {
        var open = bad && (cited[x.id] || (i === evidence.length - 1 && Object.keys(cited).length === 0));
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
    // Failures first, then errors, then skips, then passes and observations; report order within each.
    var ordered = checks.map(function (c, i) { return { c: c, i: i }; });
    ordered.sort(function (a, b) { return (RANK[a.c.outcome] - RANK[b.c.outcome]) || (a.i - b.i); });
    ordered.forEach(function (entry) {
      var c = entry.c;
      var wrap = el('div', 'check o-' + c.outcome);
      wrap.id = 'check-' + c.id;
      wrap.setAttribute('data-outcome', c.outcome);
      var head = el('button', 'check-head');
      head.type = 'button';
      var title = add(el('span', 'ctitle', c.title), c.requirements.length ? el('span', 'creqs', c.requirements.join(' ')) : null);
      add(head,
        add(el('span'), el('span', 'badge o-' + c.outcome, c.outcome)),
        el('span', 'cid', c.id), title, el('span', 'carea', c.area), el('span', 'cdur', duration(c.durationMs)),
        c.message ? el('span', 'cmsg', c.message) : null);
      var link = el('a', 'plink', '#');
      link.href = checkHash(c.id);
      link.title = 'Link to this check (click copies it)';
      link.setAttribute('aria-label', 'Link to ' + c.id);
      add(wrap, head, link);
      var row = { check: c, el: wrap, head: head, body: null,
        text: [c.id, c.title, c.area, c.message || '', c.requirements.join(' ')].join('\n').toLowerCase() };
      head.addEventListener('click', function () { setExpanded(row, wrap.getAttribute('aria-expanded') !== 'true'); });
      rows.push(row);
      rowById.set(c.id, row);
      frag.appendChild(wrap);
      setExpanded(row, c.outcome === 'fail' || c.outcome === 'error');
    });
    list.textContent = '';
    list.appendChild(frag);
  }

  function anyOutcome() {
    return Object.keys(state.outcomes).length === 0;
  }

  function applyFilters() {
    var shown = 0;
    rows.forEach(function (row) {
      var c = row.check;
      var match = (anyOutcome() || state.outcomes[c.outcome]) && (!state.area || c.area === state.area) && (!state.q || row.text.indexOf(state.q) !== -1);
      row.el.hidden = !match;
      if (match) shown++;
    });
    countEl.textContent = 'Showing ' + shown + ' of ' + rows.length + ' checks';
    document.getElementById('check-empty').hidden = shown !== 0;
    document.querySelectorAll('.chip[data-outcome]').forEach(function (chip) {
      var o = chip.getAttribute('data-outcome');
      chip.setAttribute('aria-pressed', String(o === '' ? anyOutcome() : !!state.outcomes[o]));
    });
    areaSelect.value = state.area;
  }

  function onlyOutcome(outcome) {
    state.outcomes = {};
    if (outcome) state.outcomes[outcome] = true;
  }
  function resetFilters() {
    onlyOutcome(null); state.area = ''; state.q = ''; search.value = '';
  }

  function reveal(id) {
    var row = rowById.get(id);
    if (!row) return false;
    if (row.el.hidden) { resetFilters(); applyFilters(); }
    setExpanded(row, true);
    row.el.scrollIntoView({ block: 'start' });
    return true;
  }

  // #check-<id> opens and scrolls to a check (#check=<id> is the older form).
  function followHash() {
    var hash;
    try { hash = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (hash.indexOf('check-') === 0) reveal(hash.slice(6));
    else if (hash.indexOf('check=') === 0) reveal(hash.slice(6));
  }

  document.addEventListener('click', function (event) {
    var link = event.target.closest('a.plink');
    if (link) {
      var href = link.getAttribute('href');
      copyLink(link, linkTo(href));
      if (location.hash === href) { event.preventDefault(); followHash(); }
      return;
    }
    var target = event.target.closest('[data-filter-outcome], [data-filter-area], a[href^="#check-"], .chip[data-outcome], [data-action]');
    if (!target) return;
    if (target.tagName === 'A') {
      // Same hash again: no hashchange event, so reveal here.
      if (location.hash === target.getAttribute('href')) { event.preventDefault(); followHash(); }
      return;
    }
    if (target.classList.contains('chip')) {
      var o = target.getAttribute('data-outcome');
      if (!o) onlyOutcome(null);
      else if (state.outcomes[o]) delete state.outcomes[o];
      else state.outcomes[o] = true;
    } else if (target.hasAttribute('data-filter-outcome')) {
      onlyOutcome(target.getAttribute('data-filter-outcome') || null);
      document.getElementById('checks').scrollIntoView();
    } else if (target.hasAttribute('data-filter-area')) {
      state.area = target.getAttribute('data-filter-area');
      document.getElementById('checks').scrollIntoView();
    } else if (target.getAttribute('data-action') === 'reset') {
      resetFilters();
    } else {
      var expand = target.getAttribute('data-action') === 'expand';
      rows.forEach(function (row) { if (!row.el.hidden) setExpanded(row, expand); });
      return;
    }
    applyFilters();
  });
  function copyLink(link, url) {
    function done() {
      link.setAttribute('data-copied', 'true');
      setTimeout(function () { link.removeAttribute('data-copied'); }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(done, function () {});
  }
  areaSelect.addEventListener('change', function () { state.area = areaSelect.value; applyFilters(); });
  var pending;
  search.addEventListener('input', function () {
    clearTimeout(pending);
    pending = setTimeout(function () { state.q = search.value.trim().toLowerCase(); applyFilters(); }, 120);
  });
  window.addEventListener('beforeprint', function () { rows.forEach(function (row) { if (!row.el.hidden) setExpanded(row, true); }); });
  window.addEventListener('hashchange', followHash);

  renderRows();
  applyFilters();
  followHash();
  document.body.setAttribute('data-ready', 'true');
})();
