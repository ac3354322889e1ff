package report

// pageHTML is the report page. Charts are separate SVG files shown with
// <img>, so they can also be opened, linked or pasted on their own.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>orchbench sweep {{.Rec.ID}}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1400px; }
table { border-collapse: collapse; margin: 1em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.invalid td { background: #fde0e0; }
td.fail { color: #b00; font-weight: bold; }
td.pass { color: #070; }
tr.broken td { background: #fff3d6; }
tr.inherent td { color: #777; }
figure { display: inline-block; margin: 0.5em; }
figcaption { font-size: 12px; color: #555; max-width: 800px; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; }
dt { font-weight: bold; }
</style>
</head>
<body>
<h1>Sweep {{.Rec.ID}}</h1>
{{with .Spec.Description}}<p>{{.}}</p>{{end}}
<dl>
<dt>spec</dt><dd>{{.Spec.Name}}{{with .Spec.File}} ({{.}}){{end}}</dd>
<dt>started</dt><dd>{{.Rec.Start.UTC.Format "2006-01-02 15:04:05Z"}}</dd>
<dt>seed</dt><dd>{{.Rec.Seed}}</dd>
<dt>git</dt><dd>{{or .Rec.GitSHA "unknown"}}</dd>
<dt>tools</dt><dd>{{join .ToolVersion ", "}}</dd>
<dt>steps</dt><dd>{{.Done}} of {{len .Rec.Plan}} planned done: {{.Broken}} broken (the application failed under load: a measurement), {{.Invalid}} invalid (not what was declared: excluded from statistics, run again by <code>orchbench sweep --resume {{.Rec.ID}}</code>)</dd>
<dt>SLO</dt><dd>{{if gt .Spec.SLO.P99Ms 0.0}}p99 &le; {{.Spec.SLO.P99Ms}} ms, {{end}}achieved &ge; {{.Spec.SLO.MinAchievedRatio}} &times; offered, error ratio &le; {{.Spec.SLO.MaxErrorRatio}}</dd>
<dt>report</dt><dd>generated {{.Generated}}</dd>
</dl>

{{with .Study}}<h2>{{.Title}}</h2>
<p>Regenerated from this sweep's measured steps (valid and broken; invalid ones left out), medians over repetitions with intervals that state their coverage (the exact order-statistic interval of the median; with too few repetitions for 95 %, the observed range and what it covers; a ratio's interval divides the two medians' intervals and covers at least the product of their coverages), beside the published figures. Source: {{.Source}}.</p>
<table id="study-{{.Study}}">
<tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>
{{end}}

<h2>Breaking points</h2>
<p>Lowest load level at which the repetitions' medians broke the SLO, or at which most repetitions were broken (by a gate such as task-events, or at a lower level: rules <code>gates</code> and <code>broken-reps</code>). Figures are medians over repetitions (corrected latency, ms) with an interval and its coverage beside it: from 6 repetitions the exact order-statistic interval of the median (at least 95 %); with fewer, the observed range, which covers the median only 50 % of the time with 2 repetitions, 75 % with 3, 87.5 % with 4 and 93.8 % with 5. <em>Sustained</em> is, per repetition, the highest level met before that repetition's own first break, with its median and interval.</p>
<table id="breaking-points">
<tr><th>configuration</th><th>breaking point</th><th>rule</th><th>why</th><th>p50 there</th><th>p99 there</th><th>achieved there</th><th>last good level</th><th>p99 at last good</th><th>achieved at last good</th><th>sustained per repetition</th></tr>
{{range .Breaking}}<tr{{if .Reached}} class="broken"{{end}}>
<td>{{.Configuration}}</td>
{{if .Reached}}<td>{{.Level}}</td><td>{{join .Rules ", "}}</td><td>{{join .Details "; "}}</td>
<td class="num">{{.At.P50}}</td><td class="num">{{.At.P99}}</td><td class="num">{{.At.Achieved}}</td>
{{else}}<td>not reached</td><td></td><td>{{with .MaxMeasured}}met the SLO up to {{.Level}}{{else}}no valid data{{end}}</td><td></td><td></td><td></td>{{end}}
{{with .LastGood}}<td>{{.Level}}</td><td class="num">{{.P99}}</td><td class="num">{{.Achieved}}</td>{{else}}<td>-</td><td></td><td></td>{{end}}
<td class="num">{{.SustainedText}}</td>
</tr>
{{end}}</table>

{{if .Parity}}<h2>Orchestrator parity</h2>
<p>What must be equal for the orchestrators to be the only difference, as the measured steps recorded it: enforced limits and instance count per task, its CPU policy (weight, the CPUs a quota is spread over, the swap it may use), the entry the load was aimed at, how the load spread over the measured service's instances (the imbalance: the hottest instance's share of the service's CPU × the instance count, 1 when even; flagged beyond noise, and connections per instance where the generator saw them), what the log shipping agent shipped, mean response bodies per endpoint (over the steps valid on every orchestrator: an overloaded step completes a different subset of its requests each run), image IDs, facts of the node. {{with .ParityMismatches}}<strong>{{len .}} mismatch(es) other than the orchestrator</strong> are highlighted.{{else}}No mismatch other than the orchestrator.{{end}} Rows in grey differ by nature (the orchestrator's own version, its load job).</p>
<table id="parity">
<tr><th>app / variant</th><th>aspect</th>{{range .ParityOrchestrators}}<th>{{.}}</th>{{end}}<th></th></tr>
{{range $row := .Parity}}<tr{{if $row.Mismatch}} class="invalid"{{else if $row.Inherent}} class="inherent"{{end}}>
<td>{{$row.App}} / {{$row.Variant}}</td><td>{{$row.Aspect}}{{with $row.Basis}}<br><small>over {{.}}</small>{{end}}</td>{{range $.ParityOrchestrators}}<td>{{or (index $row.Values .) "-"}}</td>{{end}}
<td>{{if $row.Mismatch}}MISMATCH{{else if $row.Inherent}}differs by nature{{else}}equal{{end}}</td>
</tr>
{{end}}</table>
{{end}}

{{if .TaskCPU}}<h2>CPU per task</h2>
<p>Which task saturates first: each task's CPU during the measured period, read from its cgroup, as a share of its enforced quota (median over valid repetitions; for several instances, the hottest). Tasks without a quota show cores used.</p>
<table id="task-cpu">
<tr><th>configuration</th><th>level</th><th>hottest tasks</th></tr>
{{range .TaskCPU}}<tr><td>{{.Configuration}}</td><td>{{.Level}}</td><td>{{range $i, $t := .Tasks}}{{if lt $i 4}}{{if $i}} · {{end}}{{$t}}{{end}}{{end}}</td></tr>
{{end}}</table>
{{if .RequestCPU}}<figure><a href="cpu-per-request.svg"><img src="cpu-per-request.svg" alt="CPU per request by task"></a><figcaption>What one request cost each task, in CPU milliseconds (its cgroup's CPU over the achieved requests, all its instances together, median over measured repetitions). Run at saturation without CPU caps (<code>just bench-social</code>), the longest segment is the task the application's capacity is. <code>orchbench results cpu {{.Rec.ID}}</code> prints the same as a table.</figcaption></figure>{{end}}
{{end}}

` + faultsSection + `
` + scalingSection + `
{{if .Disruptions}}<h2>Faults and task events</h2>
<p>What the orchestrator reported about the application's tasks during each step's load: starts, exits, OOM kills, restarts, replacements, timed from the start of the measured period. An event the step did not inject makes the step broken.</p>
<table id="disruptions">
<tr><th>step</th><th>outcome</th><th>injected fault</th><th>task events</th></tr>
{{range .Disruptions}}<tr{{if eq .Outcome "broken"}} class="broken"{{end}}><td>{{.Step}}</td><td>{{.Outcome}}</td><td>{{.Fault}}</td><td>{{range $i, $e := .Events}}{{if $i}}<br>{{end}}{{$e}}{{if eq $e.Cause "not injected"}} <strong>(not injected)</strong>{{end}}{{end}}</td></tr>
{{end}}</table>
{{end}}

<h2>Load curves</h2>
{{range .Load}}<h3>{{.Title}}</h3>
{{range .Figures}}<figure><a href="{{.File}}"><img src="{{.File}}" alt="{{.Caption}}"></a><figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{end}}

<h2>Statistics per load level</h2>
<p>Medians over the measured repetitions, each with its interval and coverage (an exact interval of the median needs 6 repetitions; with fewer, the observed range and what it covers). Rps per core divides the achieved throughput by the CPU the tasks used over the measured period (their cgroups): the measured service's instances, or every task of the application, whose datastores' share is shown beside it. No ratio is printed over less than 0.01 cores.</p>
<table id="levels">
<tr><th>configuration</th><th>level</th><th>measured reps</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>achieved rps</th><th>rps per core of the measured service</th><th>rps per core of the application (all its tasks; datastores' share)</th><th>error ratio</th><th>SLO</th></tr>
{{range .Levels}}<tr{{if .Breaks}} class="broken"{{end}}>
<td>{{.Configuration}}</td><td>{{.Level}}</td><td class="num">{{.Measured}}/{{add .Measured (add .Skipped .Invalid)}}</td>
<td class="num">{{.P50}}</td><td class="num">{{.P90}}</td><td class="num">{{.P99}}</td><td class="num">{{.P999}}</td><td class="num">{{.Achieved}}</td><td class="num">{{.ServicePerCoreText}}</td><td class="num">{{.AppPerCoreText}}</td><td class="num">{{pct .ErrorRatio}}</td>
<td>{{if not .HasData}}no valid data{{else if .Breaks}}{{join .Details "; "}}{{else}}ok{{end}}</td>
</tr>
{{end}}</table>

<h2>Percentile spectra</h2>
{{range .Spectra}}<h3>{{.Title}}</h3>
{{range .Figures}}<figure><a href="{{.File}}"><img src="{{.File}}" alt="{{.Caption}}"></a><figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{end}}

` + shippingSection + `
<h2>Verification gates</h2>
<p>Every check of every step. A failed check of the application under load (slo, responses) makes the step <em>broken</em>, a measurement; any other failed gate makes it <em>invalid</em>: highlighted and left out of all statistics above.</p>
<table id="gates">
<tr><th>step</th><th>outcome</th>{{range .GateNames}}<th>{{.}}</th>{{end}}<th>reasons</th></tr>
{{range $row := .Gates}}<tr{{if eq $row.Outcome "invalid"}} class="invalid"{{else if eq $row.Outcome "broken"}} class="broken"{{end}}>
<td>{{$row.Step}}</td><td>{{$row.Outcome}}{{if $row.Skipped}} (skipped){{end}}</td>
{{range $.GateNames}}{{with gate $row.Gates .}}<td class="{{if .Passed}}pass{{else if .NotChecked}}unchecked{{else}}fail{{end}}" title="{{.Detail}}">{{if .Passed}}pass{{else if .NotChecked}}not checked{{else}}FAIL{{end}}{{with .Detail}}: {{.}}{{end}}</td>{{else}}<td>-</td>{{end}}{{end}}
<td>{{$row.Reasons}}</td>
</tr>
{{end}}</table>
</body>
</html>
`
