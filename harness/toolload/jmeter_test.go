package toolload

import (
	"encoding/csv"
	"encoding/xml"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// jmeterTestRequest is the plan of testdata/jmeter-5.6.3.{jmx,jtl}: JMeter
// 5.6.3 (cluster/images/jmeter/home.sh) ran the .jmx, generated from it,
// against a local Python server whose /slow answers after 1.5 s and /err
// with a 503; its JTL is the .jtl.
func jmeterTestRequest() Request {
	return Request{URL: "http://127.0.0.1:38517", Connections: 3, Duration: time.Minute, Timeout: time.Second,
		Iterations: &Iterations{Threads: 3, Loops: 4, Requests: []HTTPRequest{
			{Method: "POST", Path: "/books", Body: `{"title":"x, \"y\""}`, ContentType: "application/json"},
			{Method: "PATCH", Path: "/books/1", Body: "{}"},
			{Method: "GET", Path: "/books/1"},
			{Method: "GET", Path: "/cpu-intensive?num=8"},
			{Method: "GET", Path: "/slow"},
			{Method: "GET", Path: "/err"},
			{Method: "DELETE", Path: "/books/1"},
		}}}
}

func readJTLTestdata(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/jmeter-5.6.3.jtl")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jtlEdit is the test JTL with its samples edited: each edit gets the
// header and the records (sample n is records[n]) and returns the records.
func jtlEdit(t *testing.T, edit func(col map[string]int, recs [][]string) [][]string) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(readJTLTestdata(t))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(edit(col, recs)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// set edits fields of sample n: name, value, name, value...
func set(n int, nv ...string) func(map[string]int, [][]string) [][]string {
	return func(col map[string]int, recs [][]string) [][]string {
		for i := 0; i+1 < len(nv); i += 2 {
			recs[n][col[nv[i]]] = nv[i+1]
		}
		return recs
	}
}

func TestJMeterParse(t *testing.T) {
	res, err := JMeter{}.Parse([]byte(readJTLTestdata(t)))
	if err != nil {
		t.Fatal(err)
	}
	a := res.Accounting
	// 3 × 4 × 7: 60 answered 200, 12 answered 503, 12 timed out at 1 s
	if a.Due != 84 || a.Completed != 60 || a.HTTPErrors != 12 || a.Timeouts != 12 || a.SocketErrors != 0 || !a.Balanced() {
		t.Errorf("accounting %s", a)
	}
	if res.StatusCodes[200] != 60 || res.StatusCodes[503] != 12 || len(res.StatusCodes) != 2 {
		t.Errorf("status codes %v", res.StatusCodes)
	}
	if res.Requests != 72 || res.Bytes != 15876 {
		t.Errorf("requests %d, bytes %d; want 72 answers of 15876 bytes", res.Requests, res.Bytes)
	}
	// first start 1795963105786, last end 1795963110902
	if res.DurationSeconds != 5.116 || res.Start.UnixMilli() != 1795963105786 || res.End.UnixMilli() != 1795963110902 {
		t.Errorf("window %s to %s (%.3f s)", res.Start, res.End, res.DurationSeconds)
	}
	if r := res.AchievedRate; r < 14.07 || r > 14.08 {
		t.Errorf("achieved %.3f rps, want 72 / 5.116", r)
	}
	// every sample, the timeouts at JMeter's 1006-1011 ms, sums to 14975 ms
	l := res.Latency
	if l.Count != 84 || l.Mean < 178.1e3 || l.Mean > 178.4e3 || l.Max < 1010e3 || l.Max > 1012e3 {
		t.Errorf("latency count %d, mean %.0f µs, max %d µs; want 84, 178274, 1011000", l.Count, l.Mean, l.Max)
	}
	if len(res.Endpoints) != 7 {
		t.Fatalf("%d endpoints", len(res.Endpoints))
	}
	// the server's bodies (its Content-Length): the header lines' bytes off
	bodies := map[string]int64{"POST /books": 73, "PATCH /books/1": 75, "GET /books/1": 59, "GET /cpu-intensive?num=8": 71, "DELETE /books/1": 108}
	for _, e := range res.Endpoints {
		if want, ok := bodies[e.Label]; ok && (e.Completed != 12 || e.BodyBytes != 12*want || e.BodyMax != want || e.BodySquares != float64(12*want*want)) {
			t.Errorf("%s: %d completed, %d body bytes, max %d; want 12 of %d", e.Label, e.Completed, e.BodyBytes, e.BodyMax, want)
		}
	}
	slow, errs := res.Endpoints[4], res.Endpoints[5]
	if slow.Label != "GET /slow" || slow.Count != 0 || slow.Errors != 12 || slow.Latency.Count != 12 {
		t.Errorf("GET /slow %+v", slow)
	}
	if errs.Label != "GET /err" || errs.Count != 12 || errs.Errors != 12 || errs.Completed != 0 {
		t.Errorf("GET /err %+v", errs)
	}
	// three answers of each user: 9 per endpoint
	if o := res.Opening[0]; o.Label != "POST /books" || o.Completed != 9 || o.BodyBytes != 9*73 {
		t.Errorf("opening %+v", o)
	}
	if c := res.Config; c.Connections != 3 || c.Closed == nil || c.Closed.Iterations != 28 {
		t.Errorf("config %+v", c)
	}
	if res.WallSeconds != 0 {
		t.Errorf("wall time %g: the runner says when JMeter stopped", res.WallSeconds)
	}
}

func TestJMeterParseRefusesGarbage(t *testing.T) {
	good := readJTLTestdata(t)
	header, _, _ := strings.Cut(good, "\n")
	for name, c := range map[string]struct{ in, want string }{
		"empty":          {"", "jmeter result: no header line"},
		"no samples":     {header + "\n", "jmeter result: no sample was recorded"},
		"xml":            {"<?xml version=\"1.0\"?>\n<testResults>", "jmeter result: no header line"},
		"other columns":  {"time,label\n1,GET /\n", `jmeter result: no "timeStamp" column`},
		"no plan column": {strings.Replace(good, `"orchbench_plan"`, `"other"`, 1), `no "orchbench_plan" column`},
		"not a number":   {jtlEdit(t, set(1, "elapsed", "5x")), `sample 1: elapsed "5x" is not an integer`},
		"unknown label":  {jtlEdit(t, set(1, "label", "HTTP Request")), `sample 1: label "HTTP Request" is not one of the plan's samplers`},
		"another plan":   {jtlEdit(t, set(2, "orchbench_plan", "threads=3 loops=4 requests=7 bound_ms=30000")), "sample 2 comes from another plan"},
		"garbled code":   {jtlEdit(t, set(1, "responseCode", "20")), `sample 1: response code "20" is neither an HTTP status`},
		"error count":    {jtlEdit(t, set(1, "ErrorCount", "1")), `sample 1: ErrorCount "1" contradicts success true`},
		"cut mid-sample": {good[:len(good)-40], "jmeter result: "},
	} {
		res, err := JMeter{}.Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || res != nil {
			t.Errorf("%s: got %v (result %v), want %q", name, err, res != nil, c.want)
		}
	}
}

// A JTL whose samples contradict each other or the plan they carry (lost
// or reordered samples, impossible times) comes back with its result, to
// be archived, and an error that makes the step invalid.
func TestJMeterResultThatContradictsItselfIsRefused(t *testing.T) {
	without := func(n int) func(map[string]int, [][]string) [][]string {
		return func(_ map[string]int, recs [][]string) [][]string { return append(recs[:n:n], recs[n+1:]...) }
	}
	first := func(n int) func(map[string]int, [][]string) [][]string {
		return func(_ map[string]int, recs [][]string) [][]string { return recs[:n+1] }
	}
	for name, c := range map[string]struct {
		edit func(map[string]int, [][]string) [][]string
		want string
	}{
		"a lost sample":     {without(20), `thread "users 1-3"'s request 7 is sampler #1, the sequence's #7`},
		"the last cut":      {first(59), "59 of the plan's 84 requests (3 threads × 4 loops × 7) were recorded, though the run ended after 3.8 s, before its 60 s bound"},
		"negative elapsed":  {set(1, "elapsed", "-102"), "sample 1: times out of order (elapsed -102, latency 92, connect 21 ms)"},
		"latency past end":  {set(1, "Latency", "150"), "sample 1: times out of order (elapsed 102, latency 150, connect 21 ms)"},
		"a 503 that passed": {set(15, "success", "true", "ErrorCount", "0"), "sample 15: status 503 with success true"},
		"a timeout passed":  {set(13, "success", "true", "ErrorCount", "0"), "sample 13: java.net.SocketTimeoutException counted a success"},
		"headers past size": {set(1, "bytes", "100"), "sample 1: header lines of 144 bytes in a response of 100"},
		"no header lines":   {set(1, "orchbench_headers", ""), "sample 1: header lines of 0 bytes in a response of 217"},
		"a stray thread": {func(col map[string]int, recs [][]string) [][]string {
			extra := append([]string{}, recs[1]...)
			extra[col["threadName"]] = "users 1-4"
			return append(recs, extra)
		}, `thread "users 1-4" is not one of the plan's 3`},
		"overlapping sends": {set(1, "elapsed", "300"), `thread "users 1-3"'s request starts at 1795963105949, before its previous one ended (1795963106088)`},
	} {
		t.Run(name, func(t *testing.T) {
			in := jtlEdit(t, c.edit)
			res, err := JMeter{}.Parse([]byte(in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "jmeter result contradicts itself: ") {
				t.Errorf("error %q does not say the result contradicts itself", err)
			}
			if res == nil {
				t.Error("the result is not kept for the archive")
			}
		})
	}
	// the file as rewritten by the edits is the file
	if res, err := (JMeter{}).Parse([]byte(jtlEdit(t, set(1)))); err != nil || res.Accounting.Due != 84 {
		t.Fatalf("the unedited samples: %v", err)
	}
	// a run its bound stopped is short without contradicting itself: the
	// iterations gate says the users did not finish
	bounded := jtlEdit(t, func(col map[string]int, recs [][]string) [][]string {
		recs = recs[:60]
		for _, r := range recs[1:] {
			r[col["orchbench_plan"]] = "threads=3 loops=4 requests=7 bound_ms=5000"
		}
		return recs
	})
	res, err := JMeter{}.Parse([]byte(bounded))
	if err != nil || res.Accounting.Due != 59 {
		t.Errorf("a run stopped by its bound: %v, %d samples", err, res.Accounting.Due)
	}
}

// The plan is well-formed XML with the thread group and the sequence the
// request asks for, and it is the plan that produced the test JTL.
func TestJMeterPlan(t *testing.T) {
	req := jmeterTestRequest()
	files, err := JMeter{}.Files(req)
	if err != nil {
		t.Fatal(err)
	}
	plan := files[jmeterPlanFile]
	want, err := os.ReadFile("testdata/jmeter-5.6.3.jmx")
	if err != nil {
		t.Fatal(err)
	}
	if plan != string(want) {
		t.Error("the generated plan is not testdata/jmeter-5.6.3.jmx, which JMeter ran")
	}
	type prop struct {
		Name  string `xml:"name,attr"`
		Value string `xml:",chardata"`
	}
	type element struct {
		XMLName  xml.Name
		TestName string    `xml:"testname,attr"`
		Strings  []prop    `xml:"stringProp"`
		Bools    []prop    `xml:"boolProp"`
		Elements []element `xml:"elementProp"`
		Lists    []struct {
			Elements []element `xml:"elementProp"`
		} `xml:"collectionProp"`
	}
	var doc struct {
		Trees []struct {
			Trees []struct {
				Groups []element `xml:"ThreadGroup"`
				Trees  []struct {
					Samplers []element `xml:"HTTPSamplerProxy"`
					Trees    []struct {
						Headers []struct {
							Values []prop `xml:"collectionProp>elementProp>stringProp"`
						} `xml:"HeaderManager"`
					} `xml:"hashTree"`
				} `xml:"hashTree"`
			} `xml:"hashTree"`
		} `xml:"hashTree"`
	}
	if err := xml.Unmarshal([]byte(plan), &doc); err != nil {
		t.Fatalf("the plan is not XML: %v", err)
	}
	var props func(e element) map[string]string
	props = func(e element) map[string]string {
		m := map[string]string{}
		for _, p := range append(append([]prop{}, e.Strings...), e.Bools...) {
			m[p.Name] = p.Value
		}
		subs := e.Elements
		for _, l := range e.Lists {
			subs = append(subs, l.Elements...)
		}
		for _, sub := range subs {
			for k, v := range props(sub) {
				m[k] = v
			}
		}
		return m
	}
	top := doc.Trees[0].Trees[0]
	g := props(top.Groups[0])
	if g["ThreadGroup.num_threads"] != "3" || g["LoopController.loops"] != "4" || g["ThreadGroup.duration"] != "60" ||
		g["ThreadGroup.scheduler"] != "true" || g["ThreadGroup.same_user_on_next_iteration"] != "true" || g["ThreadGroup.on_sample_error"] != "continue" {
		t.Errorf("thread group %v", g)
	}
	tree := top.Trees[0]
	if len(tree.Samplers) != 7 {
		t.Fatalf("%d samplers", len(tree.Samplers))
	}
	for i, r := range req.Iterations.Requests {
		s := tree.Samplers[i]
		p := props(s)
		if s.TestName != samplerName(i+1, r) || p["HTTPSampler.method"] != r.Method || p["HTTPSampler.path"] != r.Path ||
			p["HTTPSampler.domain"] != "127.0.0.1" || p["HTTPSampler.port"] != "38517" || p["HTTPSampler.follow_redirects"] != "false" ||
			p["HTTPSampler.connect_timeout"] != "1000" || p["HTTPSampler.response_timeout"] != "1000" || p["Argument.value"] != r.Body {
			t.Errorf("sampler %d: %s %v", i+1, s.TestName, p)
		}
	}
	// the two requests with a body have a header manager each, in order
	var types []string
	for _, h := range tree.Trees {
		for _, m := range h.Headers {
			types = append(types, m.Values[0].Value+": "+m.Values[1].Value)
		}
	}
	if strings.Join(types, "; ") != "Content-Type: application/json; Content-Type: application/json" {
		t.Errorf("header managers %q", types)
	}
	if !strings.Contains(plan, `<stringProp name="Argument.value">threads=3 loops=4 requests=7 bound_ms=60000</stringProp>`) {
		t.Error("the plan does not carry itself into the JTL")
	}
	props2 := files[jmeterPropsFile]
	for _, line := range []string{"sample_variables=orchbench_plan,orchbench_headers", "jmeter.regex.engine=oro", "sampleresult.timestamp.start=true", "httpclient4.retrycount=0",
		"jmeter.save.saveservice.output_format=csv", "httpclient.reset_state_on_thread_group_iteration=false"} {
		if !strings.Contains(props2, line+"\n") {
			t.Errorf("properties lack %q", line)
		}
	}
}

func TestJMeterPlanRefusesWhatItCannotRun(t *testing.T) {
	base := jmeterTestRequest()
	for name, c := range map[string]struct {
		edit func(*Request)
		want string
	}{
		"closed loop":  {func(r *Request) { r.Iterations = nil }, "jmeter runs an iterations block"},
		"no requests":  {func(r *Request) { r.Iterations = &Iterations{Threads: 1, Loops: 1} }, "needs threads >= 1, loops >= 1 and a request"},
		"short bound":  {func(r *Request) { r.Duration = 500 * time.Millisecond }, "under JMeter's resolution of a second"},
		"bad URL":      {func(r *Request) { r.URL = "127.0.0.1:80" }, `jmeter: bad URL "127.0.0.1:80"`},
		"a warm-up":    {func(r *Request) { r.Warmup = time.Second }, "no warm-up or think time"},
		"a think time": {func(r *Request) { r.Think = time.Second }, "no warm-up or think time"},
	} {
		r := base
		it := *base.Iterations
		r.Iterations = &it
		c.edit(&r)
		if _, _, err := (JMeter{}).Command(r, "/local", "/alloc"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

func TestJMeterCommand(t *testing.T) {
	warm, run, err := JMeter{}.Command(jmeterTestRequest(), "/local", "/alloc")
	if err != nil {
		t.Fatal(err)
	}
	if warm != nil {
		t.Errorf("warm-up %q: a thread group has none", warm)
	}
	if got := strings.Join(run, " "); got != "-n -t /local/plan.jmx -q /local/orchbench.properties -l /alloc/result.jtl -j /alloc/jmeter.log" {
		t.Errorf("command %q", got)
	}
}

// The image assembles the version the harness names.
func TestJMeterVersionIsThePomsPin(t *testing.T) {
	pom, err := os.ReadFile("../../cluster/images/jmeter/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<jmeter.version>([^<]+)</jmeter.version>`).FindSubmatch(pom)
	if m == nil || string(m[1]) != JMeterVersion {
		t.Errorf("pom pins %q, JMeterVersion is %q", m, JMeterVersion)
	}
}
