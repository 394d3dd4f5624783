package predictor

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Curve is one line of a prequential plot: the running MAE (tokens) after
// each count of segments seen.
type Curve struct {
	Name   string
	Seen   []int
	MAE    []float64
	Colour color.RGBA
}

// WriteCurvesPNG draws curves (MAE against segments seen, the y axis from 0
// to the largest value) with title to path. Drawn by hand like the confusion
// plot: no plotting library is needed for a few lines.
func WriteCurvesPNG(path, title string, curves []Curve) error {
	const w, h, left, top, right, bottom = 640, 360, 56, 40, 150, 40
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	maxX, maxY := 1, 1.0
	for _, c := range curves {
		for i := range c.Seen {
			maxX, maxY = max(maxX, c.Seen[i]), max(maxY, c.MAE[i])
		}
	}
	pw, ph := w-left-right, h-top-bottom
	px := func(x int) int { return left + x*pw/maxX }
	py := func(y float64) int { return top + ph - int(y/maxY*float64(ph)) }
	grey := color.RGBA{200, 200, 200, 255}
	for i := 0; i <= pw; i++ {
		img.Set(left+i, top+ph, color.Black)
	}
	for i := 0; i <= ph; i++ {
		img.Set(left, top+i, color.Black)
	}
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13}
	text := func(x, y int, s string) {
		d.Dot = fixed.P(x, y)
		d.DrawString(s)
	}
	for k := 0; k <= 4; k++ {
		y := maxY * float64(k) / 4
		for i := 1; i <= pw; i += 3 {
			img.Set(left+i, py(y), grey)
		}
		text(4, py(y)+4, fmt.Sprintf("%.0f", y))
		x := maxX * k / 4
		text(px(x)-8, top+ph+16, fmt.Sprint(x))
	}
	text(left, 16, title)
	text(left+pw/2-60, h-6, "segments seen")
	text(4, top-8, "MAE (tokens)")
	for ci, c := range curves {
		col := image.NewUniform(c.Colour)
		for i := 1; i < len(c.Seen); i++ {
			line(img, px(c.Seen[i-1]), py(c.MAE[i-1]), px(c.Seen[i]), py(c.MAE[i]), c.Colour)
		}
		ly := top + 10 + 18*ci
		draw.Draw(img, image.Rect(left+pw+10, ly-5, left+pw+26, ly-2), col, image.Point{}, draw.Src)
		text(left+pw+30, ly, c.Name)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("curve plot: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("curve plot %s: %w", path, err)
	}
	return f.Close()
}

// line draws a 2-pixel-thick line from (x0,y0) to (x1,y1).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	n := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= n; i++ {
		x, y := x0+(x1-x0)*i/n, y0+(y1-y0)*i/n
		img.Set(x, y, c)
		img.Set(x, y+1, c)
	}
}
