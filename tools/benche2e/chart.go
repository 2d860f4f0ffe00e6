package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// The chart's geometry, in pixels: labels on the left, the bars in the
// middle, each bar's figure and terms on the right.
const (
	chartWidth = 1040
	plotLeft   = 330
	plotWidth  = 380
	rowHeight  = 34
	barHeight  = 18
	plotTop    = 118
)

// Colours that stay apart for the colour-blind and in grey; the words
// beside each bar say the same.
const (
	metColour    = "#2e7d32"
	missedColour = "#e69f00" // the ratio is met, another term is not
	unmetColour  = "#c62828"
)

// drawChart writes r's chart to path as SVG.
func drawChart(path string, r results) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = r.chart(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// chart draws one horizontal bar per goal the run measured: the ratio, a
// dark line across it at the target, and the verdict in colour and in words
// (green, met; amber, the ratio met but a p99 or non-2xx term not; red, the
// ratio short), so that it reads in grey too.
func (r results) chart(w io.Writer) error {
	bars := r.bars()
	top := 0.0
	for _, b := range bars {
		top = max(top, b.ratio, b.min)
	}
	step, end := axis(top)
	x := func(v float64) float64 { return plotLeft + plotWidth*min(v, end)/end }
	bottom := plotTop + rowHeight*max(1, len(bars))
	foot := wrap("Measured by "+r.Command, 150)
	height := bottom + 56 + 14*len(foot)

	var s strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&s, format+"\n", args...) }
	t := html.EscapeString
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13" role="img" aria-label="Plant Store against its targets">`,
		chartWidth, height, chartWidth, height)
	p(`<title>Plant Store against its targets, %s</title>`, r.Date.Format("2006-01-02"))
	p(`<rect width="100%%" height="100%%" fill="#ffffff"/>`)
	p(`<text x="16" y="28" font-size="18" font-weight="bold">Plant Store against its targets</text>`)
	p(`<text x="16" y="50" fill="#333333">The service's rate divided by its reference's, side by side in one run: the median of the per-round ratios.</text>`)
	rounds := "rounds"
	if r.Rounds == 1 {
		rounds = "round"
	}
	p(`<text x="16" y="70" fill="#333333">%s · %s · %s · %d %s of %s · %d plants preloaded</text>`,
		r.Date.Format("2006-01-02"), t(r.Machine), t(r.Go), r.Rounds, rounds, t(r.Duration), r.Preload)
	// The legend.
	p(`<rect x="16" y="82" width="14" height="14" fill="%s"/><text x="36" y="94">met</text>`, metColour)
	p(`<rect x="76" y="82" width="14" height="14" fill="%s"/><text x="96" y="94">ratio met, p99 or non-2xx not</text>`, missedColour)
	p(`<rect x="290" y="82" width="14" height="14" fill="%s"/><text x="310" y="94">not met</text>`, unmetColour)
	p(`<line x1="380" y1="80" x2="380" y2="98" stroke="#000000" stroke-width="3"/><text x="388" y="94">target</text>`)
	p(`<line x1="450" y1="80" x2="450" y2="98" stroke="#555555" stroke-dasharray="4 3"/><text x="458" y="94">1× = as fast as the reference</text>`)

	// Every other row shaded, the grid over them, then the bars.
	for i := 1; i < len(bars); i += 2 {
		p(`<rect x="8" y="%d" width="%d" height="%d" fill="#f4f4f4"/>`, plotTop+rowHeight*i, chartWidth-16, rowHeight)
	}
	for v := 0.0; v <= end+step/2; v += step {
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e0e0e0"/>`, x(v), plotTop-6, x(v), bottom)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#333333">%s×</text>`, x(v), bottom+18, trimFloat(v))
	}
	p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555555" stroke-dasharray="4 3"/>`, x(1), plotTop-6, x(1), bottom)
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`, plotLeft, plotTop-6, plotLeft, bottom)
	p(`<text x="%d" y="%d" text-anchor="middle" fill="#333333">× the reference's requests per second (the feed: bytes per second, against list pages)</text>`,
		plotLeft+plotWidth/2, bottom+36)
	if len(bars) == 0 {
		p(`<text x="%d" y="%d">No cell of this run measures a target.</text>`, plotLeft+8, plotTop+rowHeight/2+4)
	}
	for i, b := range bars {
		y := plotTop + rowHeight*i
		mid := y + rowHeight/2
		colour, ink, verdict, class := metColour, metColour, "met", "bar met"
		switch {
		case !b.ratioMet:
			colour, ink, verdict, class = unmetColour, unmetColour, "not met", "bar unmet"
		case !b.met:
			// The bar's amber is too light for text on white.
			colour, ink, verdict, class = missedColour, "#9a5b00", "not met: "+b.missed, "bar missed"
		}
		p(`<text x="%d" y="%d" text-anchor="end">%s</text>`, plotLeft-10, mid+4, t(b.label))
		p(`<rect class="%s" x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %.2f× (%s)</title></rect>`,
			class, plotLeft, mid-barHeight/2, x(b.ratio)-plotLeft, barHeight, colour, t(b.label), b.ratio, t(b.detail))
		p(`<line class="target" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000000" stroke-width="3"/>`,
			x(b.min), mid-barHeight/2-5, x(b.min), mid+barHeight/2+5)
		p(`<text x="%d" y="%d"><tspan font-weight="bold">%.2f×</tspan> <tspan fill="%s" font-weight="bold">%s</tspan></text>`,
			plotLeft+plotWidth+14, mid-2, b.ratio, ink, verdict)
		p(`<text x="%d" y="%d" font-size="11" fill="#444444">%s</text>`, plotLeft+plotWidth+14, mid+11, t(b.detail))
	}
	for i, line := range foot {
		p(`<text x="16" y="%d" font-size="11" fill="#444444">%s</text>`, bottom+58+14*i, t(line))
	}
	p(`</svg>`)
	_, err := io.WriteString(w, s.String())
	return err
}

// axis is the step of the grid and where the axis ends: past top, in a
// round number of steps, at most about ten.
func axis(top float64) (step, end float64) {
	top = max(top*1.05, 1.5)
	for _, step = range []float64{0.25, 0.5, 1, 2, 5} {
		if top/step <= 10 {
			break
		}
	}
	return step, step * math.Ceil(top/step)
}

// trimFloat writes v without trailing zeros.
func trimFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// wrap cuts s at spaces into lines of at most n bytes where it can.
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > n {
			lines = append(lines, line)
			line = ""
		}
		line = strings.TrimSpace(line + " " + word)
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// jsonBeside is where the cells of the chart at path are saved.
func jsonBeside(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".json"
}
