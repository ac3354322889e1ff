package autoscaler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Prometheus reads a PromQL query from a Prometheus API (VictoriaMetrics'),
// as the Nomad Autoscaler's Prometheus APM does: the metric source both
// autoscalers and the harness's validity gate share.
type Prometheus struct {
	URL   string
	Query string
	HTTP  *http.Client
}

// Read runs the query now; one series is expected, none is no sample.
func (p Prometheus) Read(ctx context.Context) (float64, bool, error) {
	var body promResponse
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {p.Query}}, &body); err != nil {
		return 0, false, err
	}
	var vector []struct {
		Value [2]any `json:"value"`
	}
	if err := json.Unmarshal(body.Data.Result, &vector); err != nil {
		return 0, false, fmt.Errorf("%s: a %s result, want a vector", p.URL, body.Data.ResultType)
	}
	switch len(vector) {
	case 0:
		return 0, false, nil
	case 1:
		f, ok := number(vector[0].Value[1])
		return f, ok, nil
	}
	return 0, false, fmt.Errorf("%s: the query returned %d series, 1 is expected", p.URL, len(vector))
}

// Samples is what the source held of the query between from and to, read
// at a 1 s step as the Nomad Autoscaler reads it.
type Samples struct {
	Count     int
	Last, Max float64
}

// Range reads the query's samples between from and to.
func (p Prometheus) Range(ctx context.Context, from, to time.Time) (Samples, error) {
	var out Samples
	var body promResponse
	q := url.Values{"query": {p.Query}, "start": {strconv.FormatInt(from.Unix(), 10)}, "end": {strconv.FormatInt(to.Unix(), 10)}, "step": {"1s"}}
	if err := p.get(ctx, "/api/v1/query_range", q, &body); err != nil {
		return out, err
	}
	var matrix []struct {
		Values [][2]any `json:"values"`
	}
	if err := json.Unmarshal(body.Data.Result, &matrix); err != nil {
		return out, fmt.Errorf("%s: a %s result, want a matrix", p.URL, body.Data.ResultType)
	}
	for _, series := range matrix {
		for _, v := range series.Values {
			if f, ok := number(v[1]); ok {
				out.Count++
				out.Last = f
				out.Max = max(out.Max, f)
			}
		}
	}
	return out, nil
}

type promResponse struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

func (p Prometheus) get(ctx context.Context, path string, q url.Values, into *promResponse) error {
	if p.URL == "" {
		return fmt.Errorf("no metric source URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	c := p.HTTP
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("metric source %s: %w", p.URL, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		return fmt.Errorf("metric source %s: HTTP %d: %w", p.URL, resp.StatusCode, err)
	}
	if into.Status != "success" {
		return fmt.Errorf("metric source %s: %s", p.URL, into.Error)
	}
	return nil
}

func number(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}
