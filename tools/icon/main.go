// Command icon draws the VS Code extension's icon (editors/vscode/media/icon.png): the π
// of media/pi.svg in white on a rounded blue square, 256x256, anti-aliased. Only the
// standard library, so the output is the same on every machine:
//
//	go run ./tools/icon -o editors/vscode/media/icon.png
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

type pt struct{ x, y float64 }

// cubic samples a cubic Bézier curve into n segments' end points.
func cubic(p0, p1, p2, p3 pt, n int) []pt {
	out := make([]pt, 0, n+1)
	for i := 0; i <= n; i++ {
		t := float64(i) / float64(n)
		u := 1 - t
		out = append(out, pt{
			u*u*u*p0.x + 3*u*u*t*p1.x + 3*u*t*t*p2.x + t*t*t*p3.x,
			u*u*u*p0.y + 3*u*u*t*p1.y + 3*u*t*t*p2.y + t*t*t*p3.y,
		})
	}
	return out
}

// The strokes of media/pi.svg (a 24x24 view box), as polylines.
func strokes() [][]pt {
	top := append(cubic(pt{4, 7.5}, pt{4, 6}, pt{5, 5}, pt{6.5, 5}, 16), pt{20, 5})
	left := []pt{{9, 5}, {9, 19}}
	right := append([]pt{{15, 5}}, append(cubic(pt{15, 16.5}, pt{15, 18}, pt{16, 19}, pt{17.5, 19}, 16), pt{19, 19})...)
	return [][]pt{top, left, right}
}

func segDist(p, a, b pt) float64 {
	dx, dy := b.x-a.x, b.y-a.y
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = math.Max(0, math.Min(1, ((p.x-a.x)*dx+(p.y-a.y)*dy)/l))
	}
	return math.Hypot(p.x-(a.x+t*dx), p.y-(a.y+t*dy))
}

// inRoundRect reports whether p is inside the w x w square with corner radius r.
func inRoundRect(p pt, w, r float64) bool {
	if p.x < 0 || p.y < 0 || p.x > w || p.y > w {
		return false
	}
	cx := math.Max(r, math.Min(w-r, p.x))
	cy := math.Max(r, math.Min(w-r, p.y))
	return math.Hypot(p.x-cx, p.y-cy) <= r
}

func main() {
	out := flag.String("o", "icon.png", "the PNG to write")
	size := flag.Int("size", 256, "width and height in pixels")
	flag.Parse()
	const view, stroke, radius, ss = 24.0, 2.2, 5.0, 4
	bg := color.NRGBA{0x1f, 0x6f, 0xeb, 0xff}
	lines := strokes()
	img := image.NewNRGBA(image.Rect(0, 0, *size, *size))
	scale := view / float64(*size)
	for y := 0; y < *size; y++ {
		for x := 0; x < *size; x++ {
			var inside, white int
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					p := pt{(float64(x) + (float64(sx)+0.5)/ss) * scale, (float64(y) + (float64(sy)+0.5)/ss) * scale}
					if !inRoundRect(p, view, radius) {
						continue
					}
					inside++
					q := pt{p.x, p.y - 0.5} // the glyph sits half a unit low in the square
					for _, l := range lines {
						hit := false
						for i := 1; i < len(l); i++ {
							if segDist(q, l[i-1], l[i]) <= stroke/2 {
								hit = true
								break
							}
						}
						if hit {
							white++
							break
						}
					}
				}
			}
			if inside == 0 {
				continue
			}
			n := float64(ss * ss)
			w := float64(white) / float64(inside)
			mix := func(c uint8) uint8 { return uint8(math.Round(float64(c)*(1-w) + 255*w)) }
			img.SetNRGBA(x, y, color.NRGBA{mix(bg.R), mix(bg.G), mix(bg.B), uint8(math.Round(255 * float64(inside) / n))})
		}
	}
	f, err := os.Create(*out)
	if err == nil {
		err = png.Encode(f, img)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "icon:", err)
		os.Exit(1)
	}
}
