package main

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// writeSVG draws the load as two bar charts, requests per bucket and per server, each bar scaled to
// the chart's largest and coloured by how far it is above the mean (a hot bucket stands out red).
func (l liveLoad) writeSVG(w io.Writer) error {
	const (
		width, barH, gap, labelW, chartW = 760, 16, 4, 200, 480
	)
	charts := []struct {
		title  string
		groups []loadGroup
		label  func(loadGroup) string
	}{
		{"requests per bucket", l.buckets, func(g loadGroup) string { return "bucket " + g.name }},
		{"requests per server", l.servers, func(g loadGroup) string { return g.name }},
	}
	var b strings.Builder
	y := 30
	for _, c := range charts {
		y += 30 + len(c.groups)*(barH+gap)
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="monospace" font-size="12">`+"\n", width, y)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">%s (salt %s): %d regions</text>`+"\n", html.EscapeString(l.table), html.EscapeString(l.spec), l.regions)
	y = 30
	for _, c := range charts {
		y += 20
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y, c.title)
		y += 10
		counts := requestCounts(c.groups)
		var top, total int64
		for _, n := range counts {
			top, total = max(top, n), total+n
		}
		mean := float64(total) / float64(max(1, len(counts)))
		for i, g := range c.groups {
			barW := 0
			if top > 0 {
				barW = int(float64(chartW) * float64(counts[i]) / float64(top))
			}
			fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`, y+barH-4, html.EscapeString(c.label(g)))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, labelW, y, barW, barH, heat(float64(counts[i]), mean))
			fmt.Fprintf(&b, `<text x="%d" y="%d">%d</text>`+"\n", labelW+barW+6, y+barH-4, counts[i])
			y += barH + gap
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// heat colours a bar by its ratio to the mean: blue at or below it, red at twice it or more.
func heat(v, mean float64) string {
	if mean <= 0 || v <= mean {
		return "#4a7ab5"
	}
	if v >= 2*mean {
		return "#c0392b"
	}
	return "#e08e3c"
}
