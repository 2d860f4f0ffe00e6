package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"time"
)

// results are a run's cells as saved beside its chart: per round what the
// ratios are taken from, so that -chart-from draws the chart again without
// measuring again.
type results struct {
	Date     time.Time    `json:"date"`
	Command  string       `json:"command"`
	Machine  string       `json:"machine"`
	Go       string       `json:"go"`
	Rounds   int          `json:"rounds"`
	Duration string       `json:"duration"`
	Preload  int64        `json:"preload"`
	Cells    []cellResult `json:"cells"`
}

// cellResult is one line of the run's table.
type cellResult struct {
	Store      string        `json:"store"`
	Op         string        `json:"op"`
	Load       string        `json:"load"`
	Server     string        `json:"server,omitempty"` // "service", "peer" or "floor"; none for pgbench and the Go loop
	Conns      int           `json:"conns,omitempty"`
	Rate       int           `json:"rate,omitempty"` // an open loop's requests per second
	Ref        bool          `json:"ref,omitempty"`  // the ratio's denominator of its store and operation
	PeakRSSMiB float64       `json:"peak_rss_mib,omitempty"`
	Rounds     []roundResult `json:"rounds"`
}

// roundResult is one round of a cell; rounds of one run pair by index.
type roundResult struct {
	PerSecond      float64 `json:"per_s"`
	BytesPerSecond float64 `json:"bytes_per_s,omitempty"` // answers' bytes as the client read them (wrk's cells)
	P99MS          float64 `json:"p99_ms,omitempty"`
	Failed         int     `json:"failed,omitempty"`
}

// results gathers what the run measured; args is its command line.
func (b *bench) results(args []string) results {
	r := results{
		Date:     time.Now().UTC().Truncate(time.Second),
		Command:  strings.TrimSpace("benche2e " + strings.Join(args, " ")),
		Machine:  fmt.Sprintf("%s, %d cores", cpuModel(), runtime.NumCPU()),
		Go:       runtime.Version(),
		Rounds:   b.o.rounds,
		Duration: b.o.duration.String(),
		Preload:  max(0, b.o.preload),
	}
	for _, c := range b.cells {
		cr := cellResult{Store: c.store.kind, Op: c.sc.name, Load: c.load, Server: c.server,
			Conns: c.conns, Rate: c.rate, Ref: c.ref}
		for _, s := range c.samples {
			// Rounded to what the table shows, or finer: the file is read by people too.
			round := roundResult{PerSecond: roundTo(s.rate(), 1), Failed: s.failed}
			if w := s.window.Seconds(); w > 0 {
				round.BytesPerSecond = math.Round(float64(s.bytes) / w)
			}
			if c.sc.name != "deliver" {
				round.P99MS = roundTo(float64(s.percentile(0.99))/1e6, 3)
			}
			cr.PeakRSSMiB = max(cr.PeakRSSMiB, roundTo(float64(s.rss)/(1<<20), 1))
			cr.Rounds = append(cr.Rounds, round)
		}
		r.Cells = append(r.Cells, cr)
	}
	return r
}

// roundTo rounds v to so many decimals.
func roundTo(v float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(v*p) / p
}

func (r results) save(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func loadResults(path string) (results, error) {
	var r results
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err == nil && len(r.Cells) == 0 {
		err = fmt.Errorf("%s holds no cells", path)
	}
	return r, err
}
