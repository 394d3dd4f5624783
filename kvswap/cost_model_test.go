package kvswap

import (
	"math"
	"testing"
)

func TestCostModel(t *testing.T) {
	const (
		us = 1e-6
		gb = 1e9
	)
	// GPT-J 6B: 458,752 B/token, 16-token blocks = 7,340,032 B per block (all 28 layers).
	const block = 16 * 458752
	cases := []struct {
		name   string
		c      CostModel
		blocks int
		want   float64 // seconds, worked by hand below
	}{
		// 100 blocks = 734,003,200 B; at 25 GB/s = 0.029360128 s; + one 10 µs transfer.
		{"gathered", CostModel{PerTransfer: 10 * us, Bandwidth: 25 * gb, Gathered: true}, 100, 0.029360128 + 10e-6},
		// Same bytes; 100 transfers × 10 µs = 1 ms.
		{"per-block", CostModel{PerTransfer: 10 * us, Bandwidth: 25 * gb}, 100, 0.029360128 + 1e-3},
		// Per layer: 100 × 28 = 2,800 transfers × 10 µs = 28 ms.
		{"per-layer", CostModel{PerTransfer: 10 * us, Bandwidth: 25 * gb, Layers: 28}, 100, 0.029360128 + 0.028},
		// Layers is ignored when gathered: still one transfer.
		{"gathered-layers", CostModel{PerTransfer: 10 * us, Bandwidth: 25 * gb, Layers: 28, Gathered: true}, 100, 0.029360128 + 10e-6},
		// One block: 7,340,032 B / 25e9 = 293.60128 µs + 5 µs.
		{"one-block", CostModel{PerTransfer: 5 * us, Bandwidth: 25 * gb}, 1, 293.60128e-6 + 5e-6},
		// Unbounded bandwidth: overhead only, 3 × 2 µs.
		{"no-bandwidth", CostModel{PerTransfer: 2 * us}, 3, 6e-6},
		{"zero-blocks", CostModel{PerTransfer: 10 * us, Bandwidth: 25 * gb, Gathered: true}, 0, 0},
		{"zero-value", CostModel{}, 50, 0},
	}
	for _, tc := range cases {
		got := tc.c.Time(tc.blocks, block)
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Time(%d) = %.12g s, want %.12g s", tc.name, tc.blocks, got, tc.want)
		}
	}
	// Gathered vs per-layer on 100 blocks: 29.370 ms vs 57.360 ms.
	g := CostModel{PerTransfer: 10 * us, Bandwidth: 25 * gb, Gathered: true}
	p := CostModel{PerTransfer: 10 * us, Bandwidth: 25 * gb, Layers: 28}
	if r := p.Time(100, block) / g.Time(100, block); math.Abs(r-0.057360128/0.029370128) > 1e-9 {
		t.Errorf("per-layer/gathered ratio %.6f", r)
	}
	for _, tc := range []struct {
		c      CostModel
		blocks int
		want   int
	}{
		{CostModel{Gathered: true}, 7, 1},
		{CostModel{}, 7, 7},
		{CostModel{Layers: 1}, 7, 7},
		{CostModel{Layers: 28}, 7, 196},
		{CostModel{Layers: 28}, 0, 0},
		{CostModel{Gathered: true}, 0, 0},
	} {
		if got := tc.c.Transfers(tc.blocks); got != tc.want {
			t.Errorf("%+v.Transfers(%d) = %d, want %d", tc.c, tc.blocks, got, tc.want)
		}
	}
}
