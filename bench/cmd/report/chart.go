package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// chartImpls are drawn in this order, each in its colour.
var chartImpls = []struct{ name, color string }{
	{"jobkit", "#1f77b4"},
	{"clientgo", "#d62728"},
	{"priorityqueue", "#9467bd"},
	{"chan", "#7f7f7f"},
}

// renderChart draws scenario 1 as SVG: median ns per item against the
// number of consumers, one line per implementation, one panel per batch size,
// both axes logarithmic.
func renderChart(d *data) string {
	type point struct{ c, ns float64 }
	lines := map[string]map[string][]point{} // batch → impl → points
	var batches []string
	lo, hi := math.Inf(1), math.Inf(-1)
	var cs []float64
	for _, n := range d.order {
		res := d.results[n]
		k := res.keys
		if k["scenario"] != "MPMC" {
			continue
		}
		c, err := strconv.ParseFloat(k["c"], 64)
		ns, ok := res.median("ns/op")
		if err != nil || !ok || ns <= 0 {
			continue
		}
		if lines[k["batch"]] == nil {
			lines[k["batch"]] = map[string][]point{}
			batches = append(batches, k["batch"])
		}
		lines[k["batch"]][k["impl"]] = append(lines[k["batch"]][k["impl"]], point{c, ns})
		lo, hi = math.Min(lo, ns), math.Max(hi, ns)
		if !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	slices.Sort(cs)

	const (
		panelW, panelH = 420.0, 300.0
		left, right    = 70.0, 20.0
		top, bottom    = 50.0, 60.0
	)
	width := left + float64(max(len(batches), 1))*(panelW+right)
	height := top + panelH + bottom + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="15" font-weight="bold">Scenario 1, MPMC with distinct keys: median ns per item against consumers (log–log)</text>`+"\n", left)
	if len(batches) == 0 || len(cs) == 0 {
		b.WriteString(`<text x="70" y="80">no MPMC results</text></svg>` + "\n")
		return b.String()
	}
	ylo := math.Pow(10, math.Floor(math.Log10(lo)))
	yhi := math.Pow(10, math.Ceil(math.Log10(hi)))
	xlo, xhi := math.Log10(cs[0]), math.Log10(cs[len(cs)-1])
	if xhi == xlo {
		xhi = xlo + 1
	}
	for i, batch := range batches {
		x0 := left + float64(i)*(panelW+right)
		px := func(c float64) float64 { return x0 + (math.Log10(c)-xlo)/(xhi-xlo)*panelW }
		py := func(ns float64) float64 {
			return top + panelH - (math.Log10(ns)-math.Log10(ylo))/(math.Log10(yhi)-math.Log10(ylo))*panelH
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">batch = %s</text>`+"\n", x0+panelW/2-30, top-10, batch)
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#333"/>`+"\n", x0, top, panelW, panelH)
		for v := ylo; v <= yhi*1.0001; v *= 10 {
			for _, m := range []float64{1, 2, 5} {
				t := v * m
				if t > yhi*1.0001 {
					break
				}
				y := py(t)
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x0+panelW, y)
				if i == 0 {
					fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%g</text>`+"\n", x0-6, y+4, t)
				}
			}
		}
		for _, c := range cs {
			x := px(c)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", x, top, x, top+panelH)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%g</text>`+"\n", x, top+panelH+16, c)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">consumers C (producers P = 1, 4, 4, 16)</text>`+"\n", x0+panelW/2, top+panelH+36)
		for _, im := range chartImpls {
			pts := lines[batch][im.name]
			if len(pts) == 0 {
				continue
			}
			slices.SortFunc(pts, func(a, b point) int { return int(a.c - b.c) })
			var path []string
			for _, p := range pts {
				path = append(path, fmt.Sprintf("%.1f,%.1f", px(p.c), py(p.ns)))
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s c=%g: %.0f ns/item</title></circle>`+"\n", px(p.c), py(p.ns), im.color, im.name, p.c, p.ns)
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(path, " "), im.color)
		}
	}
	fmt.Fprintf(&b, `<text transform="translate(16,%.0f) rotate(-90)" text-anchor="middle">ns per item (median)</text>`+"\n", top+panelH/2)
	ly := top + panelH + 56
	for i, im := range chartImpls {
		x := left + float64(i)*140
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="14" height="4" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n", x, ly-4, im.color, x+20, ly+1, im.name)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
