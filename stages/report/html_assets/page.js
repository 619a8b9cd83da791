// The item browser: the items are one JSON block, parsed once; a page of
// items is rendered at a time, and an item's ideas and judgements only
// when it is opened, so the DOM stays small whatever the experiment's size.
(function () {
  "use strict";
  var items = [];
  var perPage = 25, page = 0, shown = items;
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // A judgement matches the score filter when its score is within bounds;
  // with no bound given every judgement matches, scored or not.
  function scoreOK(j, lo, hi) {
    if (lo === null && hi === null) return true;
    if (j.score === undefined || j.score === null) return false;
    return (lo === null || j.score >= lo) && (hi === null || j.score <= hi);
  }
  function num(v) { return v === "" ? null : Number(v); }
  // A number as the tables print one: whole numbers without decimals,
  // any other to three.
  function fmt(v) { return Number.isInteger(v) ? String(v) : v.toFixed(3); }
  // The groups of an item that pass the model and score filters.
  function groupsOf(it, f) {
    return it.groups.filter(function (g) {
      if (f.model && g.model !== f.model) return false;
      if (f.lo === null && f.hi === null) return true;
      return (g.judgements || []).some(function (j) { return scoreOK(j, f.lo, f.hi); });
    });
  }
  function textOf(it) {
    if (it._text === undefined) {
      var parts = [it.id];
      it.groups.forEach(function (g) {
        parts.push(g.model);
        parts.push.apply(parts, g.ideas || []);
        (g.judgements || []).forEach(function (j) { parts.push(j.dimension || "", j.judge || ""); });
        (g.judgements || []).forEach(function (j) { parts.push(j.rationale || ""); });
      });
      parts.push.apply(parts, it.given || []);
      it._text = parts.join("\n").toLowerCase();
    }
    return it._text;
  }
  function filters() {
    return { text: $("filter-text").value.trim().toLowerCase(), model: $("filter-model").value,
      lo: num($("filter-min").value), hi: num($("filter-max").value) };
  }
  function apply() {
    var f = filters();
    shown = items.filter(function (it) {
      if (f.text && textOf(it).indexOf(f.text) < 0) return false;
      return groupsOf(it, f).length > 0;
    });
    page = 0;
    render();
  }
  function renderGroups(box, it) {
    var f = filters();
    if (it.given && it.given.length) {
      // Ideas the item's stages were given (a reviewed idea), once.
      var gv = el("div", "given");
      gv.appendChild(el("h4", null, "idea(s) given: " + it.given.length));
      var gl = el("ol", "ideas");
      gl.start = 0;
      it.given.forEach(function (idea) { gl.appendChild(el("li", "idea given-idea", idea)); });
      gv.appendChild(gl);
      box.appendChild(gv);
    }
    groupsOf(it, f).forEach(function (g) {
      var gd = el("div", "group");
      gd.setAttribute("data-model", g.model);
      var h = el("h4", null, (g.model || "(no model)") + ": " + (g.ideas || []).length + " idea(s), " + (g.judgements || []).length + " judgement(s)");
      if (g.synthetic) {
        h.appendChild(document.createTextNode(" "));
        h.appendChild(el("span", "badge synthetic", "made up by the mock"));
      }
      gd.appendChild(h);
      var ol = el("ol", "ideas");
      ol.start = 0;
      (g.ideas || []).forEach(function (idea) { ol.appendChild(el("li", "idea", idea)); });
      gd.appendChild(ol);
      (g.judgements || []).forEach(function (j) {
        if (!scoreOK(j, f.lo, f.hi)) return;
        var jd = el("div", "judgement");
        // Who judged, what, and the verdict, each in an element of its
        // own: a reader (or a test) finds them by class.
        var jh = el("div", "judge");
        jh.appendChild(el("span", "dimension", j.dimension + (j.label ? " · " + j.label : "")));
        if (j.judge) {
          jh.appendChild(document.createTextNode(" · judge "));
          jh.appendChild(el("span", "judge-model", j.judge));
        }
        if (j.score !== undefined && j.score !== null) {
          // The badges after the score are not part of it.
          jd.setAttribute("data-score", String(j.score));
          jh.appendChild(document.createTextNode(" · "));
          jh.appendChild(el("span", "score", "score " + fmt(j.score)));
        }
        if (j.verdict) {
          jh.appendChild(document.createTextNode(" · "));
          jh.appendChild(el("span", "verdict", j.verdict));
        }
        if (j.synthetic) {
          jh.appendChild(document.createTextNode(" "));
          jh.appendChild(el("span", "badge synthetic", "made up by the mock"));
        }
        jd.appendChild(jh);
        if (j.shown) {
          var letters = Object.keys(j.shown).sort();
          jd.appendChild(el("div", "shown", "shown: " + letters.map(function (l) { return l + " = " + j.shown[l]; }).join(", ")));
        }
        if (j.order) jd.appendChild(el("div", "order", "ranking: " + j.order.join(" > ")));
        if (j.scores) {
          jd.appendChild(el("div", "scores", Object.keys(j.scores).sort().map(function (k) { return k + " " + fmt(j.scores[k]); }).join(", ")));
        }
        if (j.rationale) jd.appendChild(el("div", "rationale", j.rationale));
        gd.appendChild(jd);
      });
      box.appendChild(gd);
    });
  }
  function render() {
    var list = $("item-list");
    list.textContent = "";
    var pages = Math.max(1, Math.ceil(shown.length / perPage));
    if (page >= pages) page = pages - 1;
    shown.slice(page * perPage, (page + 1) * perPage).forEach(function (it, k) {
      var d = el("details", "item");
      d.setAttribute("data-id", it.id);
      var n = (it.given || []).length, nj = 0;
      it.groups.forEach(function (g) { n += (g.ideas || []).length; nj += (g.judgements || []).length; });
      d.appendChild(el("summary", null, it.id + " — " + it.groups.length + " model(s), " + n + " idea(s), " + nj + " judgement(s)"));
      var box = el("div", "item-body");
      d.appendChild(box);
      d.addEventListener("toggle", function () {
        if (d.open && !box.hasChildNodes()) renderGroups(box, it);
      });
      if (page === 0 && k === 0) d.open = true, renderGroups(box, it);
      list.appendChild(d);
    });
    $("item-count").textContent = shown.length + " of " + items.length + " items" +
      (loaded < chunks.length ? " (still reading " + (chunks.length - loaded) + " of " + chunks.length + " parts)" : "");
    $("page-info").textContent = "page " + (page + 1) + " of " + pages;
    $("page-prev").disabled = page === 0;
    $("page-next").disabled = page >= pages - 1;
  }
  // The items are chunks of gzipped JSON in base64, inflated by the
  // browser itself (no request made): the first is shown at once, the
  // others are added as they inflate, one after another (asynchronously,
  // so the page stays responsive while they load).
  function parseChunk(el) {
    var bin = atob(el.textContent.trim()), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).arrayBuffer().then(function (buf) {
      return JSON.parse(new TextDecoder().decode(buf));
    });
  }
  var chunks = Array.prototype.slice.call(document.querySelectorAll("script.items-chunk"));
  var loaded = 0;
  function loadNext() {
    if (loaded === chunks.length) {
      performance.mark("ideaflow-all-items"); // measured by BenchmarkBrowserFullSize
      document.body.setAttribute("data-loaded", "1");
      return Promise.resolve();
    }
    return parseChunk(chunks[loaded]).then(function (data) {
      loaded++;
      Array.prototype.push.apply(items, data);
      if (loaded === 1) {
        apply();
        performance.mark("ideaflow-first-page");
        document.body.setAttribute("data-ready", "1");
      } else if (loaded === chunks.length) {
        keepPage();
      }
      return loadNext();
    });
  }
  // When the last chunk arrives, re-filter without leaving the page the reader is on.
  function keepPage() {
    var p = page;
    apply();
    page = p;
    render();
  }
  ["filter-text", "filter-model", "filter-min", "filter-max"].forEach(function (id) {
    $(id).addEventListener("input", apply);
    $(id).addEventListener("change", apply);
  });
  $("page-prev").addEventListener("click", function () { page--; render(); });
  $("page-next").addEventListener("click", function () { page++; render(); });
  loadNext().catch(function (err) {
    $("item-count").textContent = "the items could not be read: " + err;
    document.body.setAttribute("data-ready", "error");
  });
})();
