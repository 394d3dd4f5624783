package engine

import "iter"

// Room as of this moment of the iteration. View.FreeBlocks and
// View.HostFree are read when the iteration starts; a policy asked during
// the batch's filling (Admit) sees the blocks and host slots that earlier
// admissions, evictions and swap-outs of the same iteration took through
// these. In a View made by hand they fall back to the start-of-iteration
// fields.

// FreeNow is the device blocks free now (cached-but-unused blocks count as
// free, as FreeBlocks does).
func (v *View) FreeNow() int {
	if v.eng == nil {
		return v.FreeBlocks
	}
	return v.eng.blocks.FreeBlocks()
}

// HostFreeNow is the host tier's free blocks now.
func (v *View) HostFreeNow() int {
	if v.eng == nil {
		return v.HostFree
	}
	return v.eng.host.Available()
}

// Watermark is the device blocks a waiting call's admission leaves free
// (Config.WatermarkFrac of the device).
func (v *View) Watermark() int {
	if v.eng == nil {
		return 0
	}
	return v.eng.watermark
}

// PausedOnDevice yields the calls paused on a tool that hold device blocks
// now (preserved, or waiting for their swap-out): the candidates an
// admission's evictions take room from (Victims.PausedVictim). Nothing in
// a View made by hand.
func (v *View) PausedOnDevice() iter.Seq[*Sequence] {
	return func(yield func(*Sequence) bool) {
		if v.eng == nil {
			return
		}
		for _, s := range v.eng.paused {
			if s.state == Paused && s.place == OnDevice && len(s.blocks) > 0 && !yield(s) {
				return
			}
		}
	}
}
