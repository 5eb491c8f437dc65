package main

import (
	"bytes"
	"fmt"
	"math"
)

// armColors tell the arms apart in the chart, in the order G, D1, D2, N.
var armColors = map[string]string{"G": "#1f77b4", "D1": "#ff7f0e", "D2": "#2ca02c", "N": "#9467bd"}

var chartArms = []string{"G", "D1", "D2", "N"}

// svg draws two panels: closed-loop throughput per workload and arm, and
// fixed-rate p99 latency per load and arm.
func (rep *compareReport) svg() []byte {
	const (
		width, height = 980, 380
		panelTop      = 50
		panelH        = 260
		leftX, leftW  = 70, 520
		rightX        = 680
		rightW        = 260
	)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">cqlpg bench compare: throughput (ops/s, closed loop, %d clients)</text>`+"\n", leftX, rep.Config.Workers)

	var peak float64
	for _, r := range rep.Throughput {
		peak = math.Max(peak, r.OpsSec)
	}
	top := niceCeil(peak)
	axis(&b, leftX, panelTop, leftW, panelH, top)
	groupW := float64(leftW) / float64(max(len(rep.Config.Workloads), 1))
	barW := groupW * 0.8 / float64(len(chartArms))
	for gi, wl := range rep.Config.Workloads {
		x0 := float64(leftX) + float64(gi)*groupW + groupW*0.1
		for ai, arm := range chartArms {
			r := rep.find(wl, arm)
			if r == nil {
				continue
			}
			h := float64(panelH) * r.OpsSec / top
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %.0f ops/s</title></rect>`+"\n",
				x0+float64(ai)*barW, float64(panelTop+panelH)-h, barW-1, h, armColors[arm], wl, arm, r.OpsSec)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x0+groupW*0.4, panelTop+panelH+15, wl)
	}

	if len(rep.Latency) > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">p99 latency (µs), %s at fixed rates</text>`+"\n", rightX, rep.Config.RateWorkload)
		var worst float64
		for _, r := range rep.Latency {
			worst = math.Max(worst, r.P99Micros)
		}
		top := niceCeil(worst)
		axis(&b, rightX, panelTop, rightW, panelH, top)
		groupW := float64(rightW) / float64(len(loadFractions))
		barW := groupW * 0.8 / float64(len(chartArms))
		for gi, f := range loadFractions {
			x0 := float64(rightX) + float64(gi)*groupW + groupW*0.1
			for ai, arm := range chartArms {
				r := rep.latency(arm, f)
				if r == nil {
					continue
				}
				h := float64(panelH) * r.P99Micros / top
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s at %.0f%%: p99 %.0f µs</title></rect>`+"\n",
					x0+float64(ai)*barW, float64(panelTop+panelH)-h, barW-1, h, armColors[arm], arm, 100*f, r.P99Micros)
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%.0f%% of D1 peak</text>`+"\n", x0+groupW*0.4, panelTop+panelH+15, 100*f)
		}
	}

	for i, arm := range chartArms {
		x := leftX + i*170
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`, x, height-28, armColors[arm])
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+16, height-18, armLabels[arm])
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

var armLabels = map[string]string{
	"G":  "G: gocql → gateway → Postgres",
	"D1": "D1: pgx, a round trip a statement",
	"D2": "D2: pgx, pipelined as the gateway",
	"N":  "N: gocql → gateway, null backend",
}

// axis draws a panel's y axis from 0 to top with five gridlines.
func axis(b *bytes.Buffer, x, y, w, h int, top float64) {
	for i := 0; i <= 5; i++ {
		gy := float64(y+h) - float64(h)*float64(i)/5
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`, x, gy, x+w, gy)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", x-4, gy+4, top*float64(i)/5)
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", x, y, x, y+h)
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, so that the
// axis's fifths are round numbers.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
