// spamflow judge: one item at a time; every label is POSTed (JSON, with this page's token) and
// saved by the server at once.
"use strict";
(function () {
  var items = [], labels = {}, index = 0;
  // this start's write token: only this page can read it, so only this page can write a label
  var token = document.querySelector("meta[name='spamflow-token']");
  function $(id) { return document.getElementById(id); }
  function indexOfKey(key) {
    for (var i = 0; i < items.length; i++) { if (items[i].key === key) { return i; } }
    return -1;
  }
  function show(i) {
    if (!items.length) { $("item-title").textContent = "nothing to judge in this run"; return; }
    index = Math.max(0, Math.min(items.length - 1, i));
    var item = items[index];
    $("item").setAttribute("data-key", item.key);
    $("item-title").textContent = item.title;
    $("item-body").innerHTML = item.html;
    $("position").textContent = (index + 1) + " / " + items.length + " (" + Object.keys(labels).length + " labelled)";
    var label = labels[item.key];
    $("current").textContent = label || "none";
    $("current").className = label ? "label-" + label : "";
    history.replaceState(null, "", "#item=" + encodeURIComponent(item.key));
    window.scrollTo(0, 0);
  }
  function nextUnlabelled(from) {
    for (var i = from + 1; i < items.length; i++) { if (!labels[items[i].key]) { return i; } }
    return Math.min(from + 1, items.length - 1);
  }
  function give(label) {
    var item = items[index];
    $("status").textContent = "saving…";
    var headers = {"Content-Type": "application/json"};
    headers[token.getAttribute("data-header")] = token.getAttribute("content");
    fetch("/api/label", {method: "POST", headers: headers, body: JSON.stringify({key: item.key, label: label})})
      .then(function (r) { return r.json().then(function (b) { return [r.ok, b]; }); })
      .then(function (res) {
        if (!res[0]) { $("status").textContent = "NOT saved: " + res[1].error; return; }
        labels[item.key] = label;
        $("status").textContent = "saved " + label + " for " + item.key;
        show(nextUnlabelled(index));
      })
      .catch(function (e) { $("status").textContent = "NOT saved (server gone?): " + e; });
  }
  function fromHash() {
    var hash = decodeURIComponent(location.hash.slice(1));
    if (hash.indexOf("item=") === 0) { return indexOfKey(hash.slice(5)); }
    if (hash.indexOf("ev-") === 0) {  // a link inside the evidence to another item
      for (var i = 0; i < items.length; i++) { if (items[i].anchor === hash) { return i; } }
    }
    return -1;
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || (e.target && e.target.tagName === "INPUT")) { return; }
    var action = {s: "spam", n: "nonspam", u: "unsure"}[e.key];
    if (action) { give(action); e.preventDefault(); }
    else if (e.key === "j" || e.key === "ArrowRight") { show(index + 1); e.preventDefault(); }
    else if (e.key === "k" || e.key === "ArrowLeft") { show(index - 1); e.preventDefault(); }
  });
  ["spam", "nonspam", "unsure"].forEach(function (l) { $(l).addEventListener("click", function () { give(l); }); });
  $("next").addEventListener("click", function () { show(index + 1); });
  $("prev").addEventListener("click", function () { show(index - 1); });
  window.addEventListener("hashchange", function () { var i = fromHash(); if (i >= 0 && i !== index) { show(i); } });
  Promise.all([fetch("/api/items").then(function (r) { return r.json(); }),
               fetch("/api/labels").then(function (r) { return r.json(); })]).then(function (got) {
    items = got[0]; labels = got[1];
    var start = fromHash();
    show(start >= 0 ? start : nextUnlabelled(-1));
    document.body.setAttribute("data-ready", "1");
  });
})();
