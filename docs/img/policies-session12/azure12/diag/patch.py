p='bench/driver.go'
s=open(p).read()
s=s.replace('''		if e.Seq.Generated() == 1 {
			d.col.FirstToken(e.Seq.Name(), t)''','''		if e.Seq.Generated() == 1 {
			diagFirst[e.Seq.Name()] = t
			d.col.FirstToken(e.Seq.Name(), t)''',1)
s=s.replace('''		} else {
			d.col.CallFinished(e.Seq.Name(), t, e.Seq.Generated())''','''		} else {
			if diagOut != nil {
				fmt.Fprintf(diagOut, "%s %.4f %.4f %.4f %d %d\\n", e.Seq.Name(), e.Seq.Arrival().Seconds(), diagFirst[e.Seq.Name()], t, len(e.Seq.Tokens())-e.Seq.Generated(), e.Seq.Generated())
			}
			d.col.CallFinished(e.Seq.Name(), t, e.Seq.Generated())''',1)
s+='''
var diagFirst = map[string]float64{}
var diagOut = func() *os.File {
	if p := os.Getenv("DIAG_CALLS"); p != "" {
		f, _ := os.Create(p)
		return f
	}
	return nil
}()
'''
s=s.replace('import (','import (\n\t"os"',1)
open(p,'w').write(s)
p='engine/policy/deadline_lane.go'
s=open(p).read()
s=s.replace('''	if d.lag != nil {
		d.lag.mark(v, s, st)
	}''','''	if d.lag != nil {
		d.lag.mark(v, s, st)
	}
	if diagProm != nil && !st.diagMarked {
		st.diagMarked = true
		rp, _ := d.edf.realized.p99()
		ft, _ := d.shadow.tail()
		fmt.Fprintf(diagProm, "%s %.3f %.3f %.3f %.3f %.3f %.3f\\n", s.Name(), v.Now.Seconds(), dl, lax, need, rp, max(ft, d.reference))
	}''',1)
s=s.replace('import (','import (\n\t"fmt"\n\t"os"',1)
s+='''
var diagProm = func() *os.File {
	if p := os.Getenv("DIAG_PROM"); p != "" {
		f, _ := os.Create(p)
		return f
	}
	return nil
}()
'''
open(p,'w').write(s)
p='engine/policy/call_state.go'
s=open(p).read()
s=s.replace('type callState struct {','type callState struct {\n\tdiagMarked bool',1)
open(p,'w').write(s)
