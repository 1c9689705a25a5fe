package main

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// implColors are the colours of the known implementations; others take
// one of spareColors by position.
var (
	implColors = map[string]string{
		"jobkit":        "#1f77b4",
		"clientgo":      "#d62728",
		"priorityqueue": "#9467bd",
		"chan":          "#7f7f7f",
		// scenario 5's peers (the scheduler's variants: see schedColor)
		"goroutines": "#7f7f7f",
		"conc":       "#2ca02c",
		"pond":       "#ff7f0e",
		"ants":       "#8c564b",
		"ants-func":  "#e377c2",
	}
	spareColors = []string{"#2ca02c", "#ff7f0e", "#8c564b", "#e377c2"}
)

func implColor(impl string, i int) string {
	if c, ok := implColors[impl]; ok {
		return c
	}
	return spareColors[i%len(spareColors)]
}

// renderChart draws one table of scenario 1, g, as SVG: median ns per item
// against the number of consumers, one panel per backlog, one line per
// implementation and batch size (batch 1 solid, larger batches dashed with
// hollow markers), both axes logarithmic. Peers without a figure of g's path
// are drawn with their path=work figure, as in the tables.
func (r *reporter) renderChart(g *group, impls []string) string {
	type point struct{ c, ns float64 }
	type series struct{ impl, batch string }
	lines := map[string]map[series][]point{} // backlog → series → points
	var panels, batchSizes []string
	lo, hi := math.Inf(1), math.Inf(-1)
	var cs []float64
	ps := map[float64]string{} // consumers → producers
	subtitle := ""
	if g != nil {
		subtitle = g.title() + ": the least favourable key kind and path"
		for _, n := range g.rows {
			k := r.d.results[n].keys
			c, err := strconv.ParseFloat(k["c"], 64)
			if err != nil {
				continue
			}
			for _, im := range impls {
				ns, ok := r.med(r.peer(n, im), "ns/op")
				if !ok || ns <= 0 {
					continue
				}
				bl := k["backlog"]
				if lines[bl] == nil {
					lines[bl] = map[series][]point{}
					panels = append(panels, bl)
				}
				s := series{im, k["batch"]}
				lines[bl][s] = append(lines[bl][s], point{c, ns})
				lo, hi = math.Min(lo, ns), math.Max(hi, ns)
				if !slices.Contains(cs, c) {
					cs = append(cs, c)
				}
				if !slices.Contains(batchSizes, k["batch"]) {
					batchSizes = append(batchSizes, k["batch"])
				}
				ps[c] = k["p"]
			}
		}
	}
	slices.Sort(cs)
	var pdesc []string
	for _, c := range cs {
		pdesc = append(pdesc, fmt.Sprintf("%s at %g", ps[c], c))
	}

	const (
		panelW, panelH = 420.0, 300.0
		left, right    = 70.0, 20.0
		top, bottom    = 70.0, 60.0
	)
	width := left + float64(max(len(panels), 1))*(panelW+right)
	height := top + panelH + bottom + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="15" font-weight="bold">Scenario 1, MPMC with distinct keys: median ns per item against consumers (log–log)</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%.0f" y="40" font-size="13">%s</text>`+"\n", left, html.EscapeString(subtitle))
	if len(panels) == 0 || len(cs) == 0 {
		b.WriteString(`<text x="70" y="80">no MPMC results</text></svg>` + "\n")
		return b.String()
	}
	ylo := math.Pow(10, math.Floor(math.Log10(lo)))
	yhi := math.Pow(10, math.Ceil(math.Log10(hi)))
	xlo, xhi := math.Log10(cs[0]), math.Log10(cs[len(cs)-1])
	if xhi == xlo {
		xhi = xlo + 1
	}
	for i, bl := range panels {
		x0 := left + float64(i)*(panelW+right)
		px := func(c float64) float64 { return x0 + (math.Log10(c)-xlo)/(xhi-xlo)*panelW }
		py := func(ns float64) float64 {
			return top + panelH - (math.Log10(ns)-math.Log10(ylo))/(math.Log10(yhi)-math.Log10(ylo))*panelH
		}
		panelFrame(&b, panel{first: i == 0, x0: x0, top: top, w: panelW, h: panelH, ylo: ylo, yhi: yhi, py: py, xs: cs, px: px},
			"backlog = "+bl, "consumers C (producers P = "+strings.Join(pdesc, ", ")+")")
		for j, im := range impls {
			color := implColor(im, j)
			for _, batch := range batchSizes {
				pts := lines[bl][series{im, batch}]
				if len(pts) == 0 {
					continue
				}
				slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.c, b.c) })
				fill, dash := color, ""
				if batch != "1" {
					fill, dash = "white", ` stroke-dasharray="6 4"`
				}
				var path []string
				for _, p := range pts {
					path = append(path, fmt.Sprintf("%.1f,%.1f", px(p.c), py(p.ns)))
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s"><title>%s c=%g batch=%s: %.0f ns/item</title></circle>`+"\n", px(p.c), py(p.ns), fill, color, im, p.c, batch, p.ns)
				}
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(path, " "), color, dash)
			}
		}
	}
	fmt.Fprintf(&b, `<text transform="translate(16,%.0f) rotate(-90)" text-anchor="middle">ns per item (median)</text>`+"\n", top+panelH/2)
	ly := top + panelH + 56
	for i, im := range impls {
		x := left + float64(i)*140
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="14" height="4" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n", x, ly-4, implColor(im, i), x+20, ly+1, im)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">solid: batch 1; dashed, hollow: batch 16</text>`+"\n", left+float64(len(impls))*140, ly+1)
	b.WriteString("</svg>\n")
	return b.String()
}

// panel is the frame of one panel of a log-log chart: its place and size,
// its axes' ranges and ticks, and the maps from values to coordinates.
type panel struct {
	first         bool // the leftmost panel, which labels the y axis
	x0, top, w, h float64
	ylo, yhi      float64
	py            func(float64) float64
	xs            []float64 // the x ticks, labelled
	px            func(float64) float64
}

// panelFrame draws p's title, border, grid and tick labels, and the x axis
// caption.
func panelFrame(b *strings.Builder, p panel, title, xcaption string) {
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-weight="bold" text-anchor="middle">%s</text>`+"\n", p.x0+p.w/2, p.top-10, html.EscapeString(title))
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#333"/>`+"\n", p.x0, p.top, p.w, p.h)
	for v := p.ylo; v <= p.yhi*1.0001; v *= 10 {
		for _, m := range []float64{1, 2, 5} {
			t := v * m
			if t > p.yhi*1.0001 {
				break
			}
			y := p.py(t)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", p.x0, y, p.x0+p.w, y)
			if p.first {
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%g</text>`+"\n", p.x0-6, y+4, t)
			}
		}
	}
	for _, c := range p.xs {
		x := p.px(c)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", x, p.top, x, p.top+p.h)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%g</text>`+"\n", x, p.top+p.h+16, c)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`+"\n", p.x0+p.w/2, p.top+p.h+36, html.EscapeString(xcaption))
}
