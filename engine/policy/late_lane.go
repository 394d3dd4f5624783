package policy

import "math"

// lateLane is pitstop's late lane: a waiting call older than θ·T, T arrival
// order's p99 end-to-end time learned online (fcfsReference), goes ahead of
// the ranked calls, in arrival order. θ is not set by hand: a quantile
// controller (Robbins–Monro stochastic approximation) moves it after every
// finished call so that the share of calls whose end-to-end time passes T
// is laneQuantile, i.e. so that pitstop's p99 is arrival order's. A call past
// T lowers θ (more calls go in the lane), a call within it raises θ a
// hundredth as much; where the tail is within T (light load) θ climbs to
// laneThetaMax and the lane holds only calls far in the tail, so the order
// that wins the mean stands. The lane's share of the device is what its calls
// need, and follows the measured excess of the tail over T: a controller, not
// a cap.
//
// With rescue (PitstopTail "rescue", "aging+rescue") the lane holds only the
// calls that can still end within T: older than θ·T and not older than T.
// For a p99 the calls already past T are the 1% allowed to pass it; serving
// them first (as the plain lane and arrival order do) spends the device on
// calls the quantile no longer counts, while the next ones cross T behind
// them. The controller's ceiling is then 1 (an empty lane).
type lateLane struct {
	rescue bool    // the lane holds calls between θ·T and T alone
	capped bool    // θ's ceiling is 1 (rescue, and the controlled aging)
	gain   float64 // the controller's step; 0: laneGain
	bySize bool    // inside the lane the ranked key, not arrival order
	theta  float64 // a waiting call older than theta·T is late; 0: not started
}

// laneQuantile is the share of calls the controller lets pass T: T is a p99.
const laneQuantile = 0.01

// laneGain is the controller's step in log θ per finished call past T (and a
// hundredth of it per call within T). Small, since a change of θ shows in the
// calls that finish up to T later: about 35 calls past T in excess of the 1%
// halve θ.
const laneGain = 0.02

// laneThetaMin and laneThetaMax bound θ: at the floor a call is late after
// a sixteenth of T (nearly arrival order); at the ceiling after 4T, which at
// light load no call reaches. The controller starts at the ceiling.
const laneThetaMin, laneThetaMax float64 = 1.0 / 16, 4

// observe moves θ after a call finished in e2e seconds against the bound t.
func (l *lateLane) observe(e2e, t float64) {
	if l.theta == 0 {
		l.theta = l.ceiling()
	}
	g := l.gain
	if g <= 0 {
		g = laneGain
	}
	step := g * laneQuantile / (1 - laneQuantile) // within T
	if e2e > t {
		step = -g
	}
	l.theta = min(max(l.theta*math.Exp(step), laneThetaMin), l.ceiling())
}

// ceiling is θ's upper bound: laneThetaMax, 1 when capped.
func (l *lateLane) ceiling() float64 {
	if l.capped {
		return 1
	}
	return laneThetaMax
}

// isLate reports whether a call of the given age (seconds since arrival) is
// in the lane against the bound t.
func (l *lateLane) isLate(age, t float64) bool {
	th := l.theta
	if th == 0 {
		th = l.ceiling()
	}
	return age > th*t && (!l.rescue || age <= t)
}
