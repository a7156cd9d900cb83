package main

// reportHTML is the page's template. Numbers a test compares with the JSON
// report carry them exactly in data-value attributes beside their human form.
const reportHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="mediactl {{.Version}}">
<title>mediactl report {{.Now}}</title>
<style>
:root { --fg: #1d2127; --muted: #5d6672; --bg: #ffffff; --panel: #f4f6f8; --line: #d5dae0;
  --ref: #3b73c4; --excl: #1d3f73; --orph: #d9822b; --frame: transparent; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e3e7ec; --muted: #9aa4b0; --bg: #14171b; --panel: #1e2328; --line: #343b43;
    --ref: #6a9de6; --excl: #a9c8f5; --orph: #f0a65a; }
}
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 1100px; padding: 1.5rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; } h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
.muted { color: var(--muted); } .bad { color: var(--orph); font-weight: 600; }
.cards { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .9rem; min-width: 9rem; }
.card b { display: block; font-size: 1.25rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 1rem; }
figure { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .5rem; }
figcaption { color: var(--muted); font-size: .85rem; margin-bottom: .25rem; }
svg { width: 100%; height: auto; display: block; }
svg text { fill: var(--fg); font-size: 11px; } svg text.val { fill: var(--muted); }
svg .ref { fill: var(--ref); } svg .excl { fill: var(--excl); } svg .orph { fill: var(--orph); }
svg .ref-key { fill: var(--ref); } svg .orph-key { fill: var(--orph); }
svg .frame { fill: none; stroke: var(--line); } svg polyline { fill: none; stroke: var(--ref); stroke-width: 2; }
table { border-collapse: collapse; width: 100%; } th, td { padding: .3rem .5rem; border-bottom: 1px solid var(--line); text-align: right; }
th:first-child, td:first-child { text-align: left; word-break: break-all; }
th[data-sort] { cursor: pointer; user-select: none; } th[data-sort]::after { content: " ⇅"; color: var(--muted); }
@media print {
  body { max-width: none; padding: 0; color: #000; background: #fff; }
  .card, figure { break-inside: avoid; } section { break-before: auto; } th[data-sort]::after { content: ""; }
  .grid { grid-template-columns: 1fr 1fr; }
}
</style>
</head>
<body>
<header>
<h1>Where the space goes</h1>
<p class="muted">mediactl report{{with .Doc.Shard}} (shard {{.}}){{end}}{{with .Doc.Merged}} (merged: {{len .Shards}} of {{.Of}} shards){{end}}, {{.Now}} · outcome <span id="outcome">{{.Doc.Outcome}}</span> (exit {{.Doc.ExitCode}}) · owners by {{.Doc.Rule}}{{if not .Doc.Complete}} · <span class="bad">INCOMPLETE: the counts are partial</span>{{end}}</p>
</header>
{{with .Doc.Totals}}
<section id="totals" class="cards">
<div class="card">stored<b data-value="{{.Stored.Bytes}}" id="total-stored-bytes">{{ibytes .Stored.Bytes}}</b><span data-value="{{.Stored.Blobs}}" id="total-stored-blobs">{{comma .Stored.Blobs}}</span> blobs</div>
<div class="card">referenced<b data-value="{{.Referenced.Bytes}}" id="total-referenced-bytes">{{ibytes .Referenced.Bytes}}</b><span data-value="{{.Referenced.Blobs}}" id="total-referenced-blobs">{{comma .Referenced.Blobs}}</span> blobs</div>
<div class="card">orphaned<b data-value="{{.Orphaned.Bytes}}" id="total-orphaned-bytes">{{ibytes .Orphaned.Bytes}}</b><span data-value="{{.Orphaned.Blobs}}" id="total-orphaned-blobs">{{comma .Orphaned.Blobs}}</span> blobs</div>
<div class="card">shared by owners<b data-value="{{.Shared.Bytes}}" id="total-shared-bytes">{{ibytes .Shared.Bytes}}</b>{{comma .Shared.Blobs}} blobs</div>
<div class="card">in trash<b data-value="{{.InTrash.Bytes}}" id="total-trash-bytes">{{ibytes .InTrash.Bytes}}</b>{{comma .InTrash.Blobs}} blobs, {{comma .Marked.Blobs}} marked</div>
<div class="card">dangling references<b data-value="{{.DanglingReferences}}" id="total-dangling">{{comma .DanglingReferences}}</b>{{comma .DanglingBlobs}} blobs missing</div>
{{with .Corrupt}}<div class="card">corrupt<b data-value="{{.Blobs}}" id="total-corrupt">{{comma .Blobs}}</b>{{ibytes .Bytes}}</div>{{end}}
</section>
{{end}}
{{with .Doc.Problems}}<section id="problems"><h2>Problems</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul></section>{{end}}
{{with .Doc.Notes}}<section id="notes"><h2>Notes</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul></section>{{end}}

<section id="owners">
<h2>Owners</h2>
<p class="muted"><span id="owner-count" data-value="{{.Doc.OwnerCount}}">{{.Doc.OwnerCount}}</span> owners{{if .Cut}}, the {{.Top}} largest shown (<code>-o json</code> lists all){{end}}. Exclusive bytes are what forgetting the owner would free; shared blobs are named by more than one owner.</p>
<figure><figcaption>{{.OwnersBy.Label}}</figcaption>{{template "chart" .OwnersBy}}</figure>
<table id="owner-table">
<thead><tr><th data-sort="text">owner</th><th data-sort="num">units</th><th data-sort="num">references</th><th data-sort="num">blobs</th><th data-sort="num">referenced</th><th data-sort="num">exclusive</th><th data-sort="num">last activity</th></tr></thead>
<tbody>
{{range .Owners}}<tr class="owner"><td data-value="{{.ID}}">{{.ID}}{{with .Agent}} <span class="muted">({{.}})</span>{{end}}</td><td data-value="{{.Units}}">{{comma .Units}}</td><td data-value="{{.References}}">{{comma .References}}</td><td data-value="{{.Referenced.Blobs}}">{{comma .Referenced.Blobs}}</td><td data-value="{{.Referenced.Bytes}}" class="referenced">{{ibytes .Referenced.Bytes}}</td><td data-value="{{.Exclusive.Bytes}}" class="exclusive">{{ibytes .Exclusive.Bytes}}</td><td data-value="{{unix .LastActivity}}">{{when .LastActivity}}</td></tr>
{{end}}</tbody>
<tfoot>{{with .Doc.Unattributed}}<tr id="unattributed"><td>unattributed</td><td data-value="{{.Units}}">{{comma .Units}}</td><td data-value="{{.References}}">{{comma .References}}</td><td>{{comma (add .Referenced.Blobs .TextOnly.Blobs)}}</td><td data-value="{{add .Referenced.Bytes .TextOnly.Bytes}}">{{ibytes (add .Referenced.Bytes .TextOnly.Bytes)}}</td><td data-value="{{.Exclusive.Bytes}}">{{ibytes .Exclusive.Bytes}}</td><td>-</td></tr>{{end}}</tfoot>
</table>
{{with .Doc.Unattributed.UnitList}}<details><summary>unattributed session units</summary><ul>{{range .}}<li>{{.String}}</li>{{end}}</ul></details>{{end}}
</section>

{{range $i, $s := .Stores}}
<section class="store" id="store-{{$i}}">
<h2>{{$s.Store}} <span class="muted">({{$s.Kind}})</span></h2>
<p><span class="stored" data-value="{{$s.Stored.Bytes}}">{{ibytes $s.Stored.Bytes}}</span> in {{comma $s.Stored.Blobs}} blobs: {{ibytes $s.Referenced.Bytes}} referenced ({{pct $s.Referenced.Bytes $s.Stored.Bytes}}), {{ibytes $s.Orphaned.Bytes}} orphaned, {{ibytes $s.Shared.Bytes}} shared; {{comma $s.InTrash.Blobs}} blobs ({{ibytes $s.InTrash.Bytes}}) in {{$s.TrashRuns}} trash runs, {{comma $s.Marked.Blobs}} marked.
Growth: <span class="per-day" data-value="{{printf "%.0f" $s.Growth.BytesPerDay}}">{{perday $s.Growth.BytesPerDay}}</span> a day over the last 90 days.</p>
<div class="grid">
<figure class="chart-age"><figcaption>{{$s.AgeChart.Label}}</figcaption>{{template "chart" $s.AgeChart}}</figure>
<figure class="chart-lastref"><figcaption>{{$s.LastRefChart.Label}} (unknown: no session unit said when; never: orphaned)</figcaption>{{template "chart" $s.LastRefChart}}</figure>
<figure class="chart-growth"><figcaption>{{$s.GrowthChart.Label}}{{with $s.Growth.Filesystem}} · file system {{ibytes (int64 .Free)}} free of {{ibytes (int64 .Size)}}, full in <span class="days-until-full">{{days .DaysUntilFull}}</span> at this rate{{end}}</figcaption>{{template "chart" $s.GrowthChart}}</figure>
<figure class="chart-policies"><figcaption>{{$s.PolicyChart.Label}}</figcaption>{{template "chart" $s.PolicyChart}}</figure>
<figure class="chart-types"><figcaption>{{$s.TypeChart.Label}}</figcaption>{{template "chart" $s.TypeChart}}</figure>
</div>
<h3>What each policy would free now</h3>
<table class="policies"><thead><tr><th>policy</th><th>blobs</th><th>bytes</th><th>still referenced</th></tr></thead><tbody>
{{range $s.Policies}}<tr class="policy"><td>{{.Name}}{{with .CapMet}}{{if not .}} <span class="bad">(cap not met)</span>{{end}}{{end}}</td><td data-value="{{.Free.Blobs}}">{{comma .Free.Blobs}}</td><td data-value="{{.Free.Bytes}}">{{ibytes .Free.Bytes}}</td><td data-value="{{.Referenced}}">{{comma .Referenced}}</td></tr>
{{end}}</tbody></table>
<h3>By size</h3>
<table class="sizes"><thead><tr><th>size</th><th>blobs</th><th>bytes</th></tr></thead><tbody>
{{range $s.BySize}}<tr><td>{{.Class}}</td><td data-value="{{.Blobs}}">{{comma .Blobs}}</td><td data-value="{{.Bytes}}">{{ibytes .Bytes}}</td></tr>
{{end}}</tbody></table>
</section>
{{end}}
<script>
// Sort the owner table by the column clicked (again: the other way).
document.querySelectorAll('#owner-table th[data-sort]').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0], num = th.dataset.sort === 'num';
    var dir = th.dataset.dir === 'desc' ? 1 : -1;
    th.dataset.dir = dir === 1 ? 'asc' : 'desc';
    Array.from(body.rows).sort(function (a, b) {
      var x = a.cells[col].dataset.value, y = b.cells[col].dataset.value;
      return dir * (num ? Number(x) - Number(y) : x.localeCompare(y));
    }).forEach(function (r) { body.appendChild(r); });
  });
});
</script>
</body>
</html>
{{define "chart"}}<svg viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Label}}" xmlns="http://www.w3.org/2000/svg">
{{range .Rects}}<rect x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .Y}}" width="{{printf "%.1f" .W}}" height="{{printf "%.1f" .H}}" class="{{.Class}}"><title>{{.Tip}}</title></rect>
{{end}}{{with .Line}}<polyline points="{{.}}"/>{{end}}
{{range .Texts}}<text x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .Y}}"{{with .Anchor}} text-anchor="{{.}}"{{end}}{{with .Class}} class="{{.}}"{{end}}>{{.S}}</text>
{{end}}</svg>{{end}}`
