// Command benchplot draws the benchmark results (JSON lines from scripts/bench.sh) as a
// PNG: time (open + context + prepare) and peak RSS against file size, for pi-lsp and Pi.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"log"
	"math"
	"os"
	"sort"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

type result struct {
	Tool      string  `json:"tool"`
	Bytes     float64 `json:"bytes"`
	OpenMs    float64 `json:"openMs"`
	ContextMs float64 `json:"contextMs"`
	PrepareMs float64 `json:"prepareMs"`
	MaxRssKB  float64 `json:"maxRssKB"`
	Timeout   bool    `json:"timeout"`
}

var (
	white  = color.RGBA{255, 255, 255, 255}
	black  = color.RGBA{30, 30, 30, 255}
	grey   = color.RGBA{210, 210, 210, 255}
	blue   = color.RGBA{31, 119, 180, 255}
	orange = color.RGBA{230, 126, 34, 255}
)

func main() {
	in := flag.String("in", "", "results (JSON lines)")
	out := flag.String("o", "bench.png", "output PNG")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	series := map[string][]result{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) == nil && (r.Tool == "pi-lsp" || r.Tool == "pi") && !r.Timeout {
			series[r.Tool] = append(series[r.Tool], r)
		}
	}
	for _, s := range series {
		sort.Slice(s, func(i, j int) bool { return s[i].Bytes < s[j].Bytes })
	}
	img := image.NewRGBA(image.Rect(0, 0, 1200, 500))
	draw.Draw(img, img.Bounds(), &image.Uniform{white}, image.Point{}, draw.Src)
	panel(img, image.Rect(60, 40, 580, 440), series, "time: open + context + prepare (ms)", func(r result) float64 { return r.OpenMs + r.ContextMs + r.PrepareMs })
	panel(img, image.Rect(660, 40, 1180, 440), series, "peak RSS (MB)", func(r result) float64 { return r.MaxRssKB / 1024 })
	text(img, 60, 480, "x: session file size (MB)   blue: pi-lsp   orange: Pi 0.73.1 (library on Node 20)", black)
	o, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	defer o.Close()
	if err := png.Encode(o, img); err != nil {
		log.Fatal(err)
	}
}

func panel(img *image.RGBA, r image.Rectangle, series map[string][]result, title string, y func(result) float64) {
	maxX, maxY := 1.0, 1.0
	for _, s := range series {
		for _, p := range s {
			maxX = math.Max(maxX, p.Bytes/1e6)
			maxY = math.Max(maxY, y(p))
		}
	}
	maxY *= 1.1
	for i := 0; i <= 4; i++ { // grid
		gy := r.Max.Y - (r.Dy()*i)/4
		line(img, r.Min.X, gy, r.Max.X, gy, grey)
		text(img, r.Min.X-55, gy+4, fmt.Sprintf("%6.0f", maxY*float64(i)/4), black)
		gx := r.Min.X + (r.Dx()*i)/4
		line(img, gx, r.Min.Y, gx, r.Max.Y, grey)
		text(img, gx-12, r.Max.Y+16, fmt.Sprintf("%.0f", maxX*float64(i)/4), black)
	}
	line(img, r.Min.X, r.Max.Y, r.Max.X, r.Max.Y, black)
	line(img, r.Min.X, r.Min.Y, r.Min.X, r.Max.Y, black)
	text(img, r.Min.X, r.Min.Y-12, title, black)
	for tool, s := range series {
		c := blue
		if tool == "pi" {
			c = orange
		}
		px, py := -1, -1
		for _, p := range s {
			x := r.Min.X + int(float64(r.Dx())*(p.Bytes/1e6)/maxX)
			yy := r.Max.Y - int(float64(r.Dy())*y(p)/maxY)
			for dx := -3; dx <= 3; dx++ {
				for dy := -3; dy <= 3; dy++ {
					img.Set(x+dx, yy+dy, c)
				}
			}
			if px >= 0 {
				thick(img, px, py, x, yy, c)
			}
			px, py = x, yy
		}
	}
}

func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := math.Abs(float64(x1-x0)), math.Abs(float64(y1-y0))
	n := int(math.Max(dx, dy))
	for i := 0; i <= n; i++ {
		t := 0.0
		if n > 0 {
			t = float64(i) / float64(n)
		}
		img.Set(x0+int(t*float64(x1-x0)), y0+int(t*float64(y1-y0)), c)
	}
}

func thick(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	for d := -1; d <= 1; d++ {
		line(img, x0, y0+d, x1, y1+d, c)
	}
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
