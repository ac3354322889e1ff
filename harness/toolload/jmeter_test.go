package toolload

import (
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
	// first start 1795962773417, last end 1795962778502
	if res.DurationSeconds != 5.085 || res.Start.UnixMilli() != 1795962773417 || res.End.UnixMilli() != 1795962778502 {
		t.Errorf("window %s to %s (%.3f s)", res.Start, res.End, res.DurationSeconds)
	}
	if r := res.AchievedRate; r < 14.15 || r > 14.16 {
		t.Errorf("achieved %.3f rps, want 72 / 5.085", r)
	}
	// every sample, the timeouts at JMeter's 1002-1008 ms, sums to 14894 ms
	l := res.Latency
	if l.Count != 84 || l.Mean < 177.2e3 || l.Mean > 177.5e3 || l.Max < 1007e3 || l.Max > 1009e3 {
		t.Errorf("latency count %d, mean %.0f µs, max %d µs; want 84, 177310, 1008000", l.Count, l.Mean, l.Max)
	}
	if len(res.Endpoints) != 7 {
		t.Fatalf("%d endpoints", len(res.Endpoints))
	}
	post, slow, errs := res.Endpoints[0], res.Endpoints[4], res.Endpoints[5]
	if post.Label != "POST /books" || post.Completed != 12 || post.BodyBytes != 12*73 || post.BodyMax != 73 || post.BodySquares != 12*73*73 {
		t.Errorf("POST /books %+v", post)
	}
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
		"xml":            {"<?xml version=\"1.0\"?>\n<testResults>", `jmeter result: no header line`},
		"other columns":  {"time,label\n1,GET /\n", `jmeter result: no "timeStamp" column`},
		"no plan column": {strings.ReplaceAll(good, `"orchbench_plan"`, `"other"`), `no "orchbench_plan" column`},
		"not a number":   {strings.Replace(good, ",54,#1 POST", ",5x,#1 POST", 1), `line 2: elapsed "5x" is not an integer`},
		"unknown label":  {strings.Replace(good, "#1 POST /books", "HTTP Request", 1), `line 2: label "HTTP Request" is not one of the plan's samplers`},
		"another plan":   {strings.Replace(good, "requests=7 bound_ms=60000", "requests=7 bound_ms=30000", 1), "line 3 comes from another plan"},
		"garbled code":   {strings.Replace(good, ",200,OK,", ",20,OK,", 1), `line 2: response code "20" is neither an HTTP status`},
		"error count":    {strings.Replace(good, "true,,217,196,3,3,54,1,0,", "true,,217,196,3,3,54,1,1,", 1), `line 2: ErrorCount "1" contradicts success true`},
		"cut mid-line":   {good[:len(good)-40], "fields, the header"},
	} {
		res, err := JMeter{}.Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || res != nil {
			t.Errorf("%s: got %v (result %v), want %q", name, err, res != nil, c.want)
		}
	}
}

// A JTL whose samples contradict each other or the plan they carry (lost
// or reordered rows, impossible times) comes back with its result, to be
// archived, and an error that makes the step invalid.
func TestJMeterResultThatContradictsItselfIsRefused(t *testing.T) {
	good := readJTLTestdata(t)
	lines := strings.SplitAfter(good, "\n")
	without := func(i int) string { return strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "") }
	for name, c := range map[string]struct{ in, want string }{
		"a lost row":        {without(20), `thread "users 1-3"'s request 7 is sampler #1, the sequence's #7`},
		"the last rows cut": {strings.Join(lines[:60], ""), "59 of the plan's 84 requests (3 threads × 4 loops × 7) were recorded, though the run ended after 3.8 s, before its 60 s bound"},
		"negative elapsed":  {strings.Replace(good, ",54,#1 POST", ",-54,#1 POST", 1), "line 2: times out of order (elapsed -54, latency 54, connect 41 ms)"},
		"latency past end":  {strings.Replace(good, "3,3,54,1,0,41", "3,3,99,1,0,41", 1), "line 2: times out of order (elapsed 54, latency 99, connect 41 ms)"},
		"a 503 that passed": {strings.Replace(good, "users 1-1,false,,216,121,3,3,21,1,1,", "users 1-1,true,,216,121,3,3,21,1,0,", 1), "line 20: status 503 with success true"},
		"a timeout passed":  {strings.Replace(good, "Read timed out,users 1-2,false,,2677,0,3,3,0,1,1", "Read timed out,users 1-2,true,,2677,0,3,3,0,1,0", 1), "java.net.SocketTimeoutException counted a success"},
		"body past bytes":   {strings.Replace(good, "bound_ms=60000,73\n", "bound_ms=60000,730\n", 1), "line 2: a body of 730 bytes in a response of 217"},
		"a stray thread":    {good + strings.Replace(lines[1], "users 1-3", "users 1-4", 1), `thread "users 1-4" is not one of the plan's 3`},
		"overlapping sends": {strings.Replace(good, "1795962773419,54,#1 POST", "1795962773419,254,#1 POST", 1), `thread "users 1-3"'s request starts at`},
	} {
		t.Run(name, func(t *testing.T) {
			if c.in == good {
				t.Fatal("the edit changed nothing")
			}
			res, err := JMeter{}.Parse([]byte(c.in))
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
	// a run its bound stopped is short without contradicting itself: the
	// iterations gate says the users did not finish
	bounded := strings.ReplaceAll(strings.Join(lines[:60], ""), "bound_ms=60000", "bound_ms=5000")
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
	for _, line := range []string{"sample_variables=orchbench_plan,orchbench_body", "sampleresult.timestamp.start=true", "httpclient4.retrycount=0",
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
