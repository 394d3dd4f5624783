package tinytools

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/pitstop-llm/pitstop/tools"
)

// ---- calculator ----

// number writes a random operand: mostly small integers, some decimals.
func number(r *rand.Rand) string {
	x := r.Float64()
	switch {
	case x < 0.35:
		return strconv.Itoa(1 + r.IntN(20))
	case x < 0.65:
		return strconv.Itoa(10 + r.IntN(90))
	case x < 0.85:
		return strconv.Itoa(100 + r.IntN(900))
	case x < 0.93:
		return strconv.Itoa(1000 + r.IntN(9000))
	default:
		return strconv.Itoa(r.IntN(100)) + "." + strconv.Itoa(1+r.IntN(9))
	}
}

func opSpacing(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return ""
	}
	return " "
}

// expression returns a random arithmetic expression.
func expression(r *rand.Rand) string {
	sp := opSpacing(r)
	op := func() string { return pick(r, []string{"+", "-", "*", "*", "/"}) }
	bin := func(a, o, b string) string { return a + sp + o + sp + b }
	x := r.Float64()
	switch {
	case x < 0.55:
		o := op()
		a, b := number(r), number(r)
		if o == "/" && r.IntN(10) < 7 { // mostly exact quotients
			q, d := 1+r.IntN(99), 1+r.IntN(40)
			a, b = strconv.Itoa(q*d), strconv.Itoa(d)
		}
		return bin(a, o, b)
	case x < 0.70:
		return bin(bin(number(r), op(), number(r)), op(), number(r))
	case x < 0.82:
		return "(" + bin(number(r), pick(r, []string{"+", "-"}), number(r)) + ")" + sp + pick(r, []string{"*", "/"}) + sp + number(r)
	case x < 0.91:
		return strconv.Itoa(2+r.IntN(11)) + "^" + strconv.Itoa(2+r.IntN(3))
	default:
		n := 1 + r.IntN(40)
		if r.IntN(2) == 0 {
			n *= n
		}
		return "sqrt(" + strconv.Itoa(n) + ")"
	}
}

var calcSymbolic = []string{
	"What is %s?", "What's %s?", "Calculate %s.", "Compute %s.", "Evaluate %s.",
	"%s = ?", "How much is %s?", "Can you work out %s for me?", "Please calculate %s.",
	"Quick question: what is %s?", "what is %s", "Solve %s.", "What does %s equal?",
	"I need the value of %s.", "Use the calculator: %s", "%s",
}

var calcAnswers = []string{"The answer is %s.", "%s", "It is %s.", "The result is %s.", "That comes to %s.", "It's %s."}

func calcQuestion(r *rand.Rand) toolQ {
	var q, expr string
	if r.IntN(10) < 6 {
		expr = expression(r)
		q = fmt.Sprintf(pick(r, calcSymbolic), expr)
	} else {
		a, b := number(r), number(r)
		type verbal struct {
			q    []string
			expr string
		}
		p, x := strconv.Itoa(1+r.IntN(99)), number(r)
		n := strconv.Itoa(1 + r.IntN(400))
		e := strconv.Itoa(2 + r.IntN(4))
		forms := []verbal{
			{[]string{"What is %[1]s times %[2]s?", "What is %[1]s multiplied by %[2]s?", "Multiply %[1]s by %[2]s.", "What is the product of %[1]s and %[2]s?"}, a + " * " + b},
			{[]string{"What is %[1]s plus %[2]s?", "Add %[1]s and %[2]s.", "What is the sum of %[1]s and %[2]s?", "What do %[1]s and %[2]s add up to?"}, a + " + " + b},
			{[]string{"What is %[1]s minus %[2]s?", "Subtract %[2]s from %[1]s.", "What is the difference between %[1]s and %[2]s?"}, a + " - " + b},
			{[]string{"What is %[1]s divided by %[2]s?", "Divide %[1]s by %[2]s.", "What is %[1]s over %[2]s?"}, a + " / " + b},
			{[]string{"What is %[3]s%% of %[4]s?", "Calculate %[3]s percent of %[4]s.", "How much is %[3]s%% of %[4]s?"}, p + " / 100 * " + x},
			{[]string{"What is the square root of %[5]s?", "Find the square root of %[5]s."}, "sqrt(" + n + ")"},
			{[]string{"What is %[1]s squared?", "Square %[1]s."}, a + "^2"},
			{[]string{"What is %[1]s to the power of %[6]s?", "What is %[1]s raised to the power %[6]s?"}, a + "^" + e},
		}
		f := pick(r, forms)
		q = fmt.Sprintf(pick(r, f.q), a, b, p, x, n, e)
		expr = f.expr
	}
	return toolQ{
		question: q,
		tool:     tools.CalculatorTool,
		args:     argsJSON("expression", expr),
		answer: func(r *rand.Rand, result, key string) string {
			if r.IntN(3) == 0 {
				return expr + " = " + key + "."
			}
			return fmt.Sprintf(pick(r, calcAnswers), key)
		},
	}
}

// ---- current_time ----

// Cities and their IANA time zones.
var Cities = [][2]string{
	{"Tokyo", "Asia/Tokyo"}, {"Paris", "Europe/Paris"}, {"London", "Europe/London"},
	{"New York", "America/New_York"}, {"Los Angeles", "America/Los_Angeles"},
	{"Chicago", "America/Chicago"}, {"Sydney", "Australia/Sydney"}, {"Berlin", "Europe/Berlin"},
	{"Madrid", "Europe/Madrid"}, {"Rome", "Europe/Rome"}, {"Moscow", "Europe/Moscow"},
	{"Dubai", "Asia/Dubai"}, {"Singapore", "Asia/Singapore"}, {"Hong Kong", "Asia/Hong_Kong"},
	{"Shanghai", "Asia/Shanghai"}, {"Beijing", "Asia/Shanghai"}, {"Seoul", "Asia/Seoul"},
	{"Mumbai", "Asia/Kolkata"}, {"Delhi", "Asia/Kolkata"}, {"Bangkok", "Asia/Bangkok"},
	{"Jakarta", "Asia/Jakarta"}, {"Cairo", "Africa/Cairo"}, {"Johannesburg", "Africa/Johannesburg"},
	{"Lagos", "Africa/Lagos"}, {"Nairobi", "Africa/Nairobi"}, {"Sao Paulo", "America/Sao_Paulo"},
	{"Mexico City", "America/Mexico_City"}, {"Toronto", "America/Toronto"},
	{"Vancouver", "America/Vancouver"}, {"Denver", "America/Denver"}, {"Honolulu", "Pacific/Honolulu"},
	{"Auckland", "Pacific/Auckland"}, {"Istanbul", "Europe/Istanbul"}, {"Athens", "Europe/Athens"},
	{"Amsterdam", "Europe/Amsterdam"}, {"Stockholm", "Europe/Stockholm"}, {"Lisbon", "Europe/Lisbon"},
	{"Dublin", "Europe/Dublin"}, {"Zurich", "Europe/Zurich"}, {"Vienna", "Europe/Vienna"},
	{"Warsaw", "Europe/Warsaw"}, {"Helsinki", "Europe/Helsinki"}, {"Tehran", "Asia/Tehran"},
	{"Karachi", "Asia/Karachi"}, {"Manila", "Asia/Manila"}, {"Lima", "America/Lima"},
	{"Bogota", "America/Bogota"}, {"Santiago", "America/Santiago"},
}

var (
	timeQs = []string{
		"What time is it in %s?", "What's the time in %s?", "What is the current time in %s?",
		"Tell me the time in %s.", "Current time in %s?", "What time is it now in %s?",
		"Do you know what time it is in %s?", "what time is it in %s", "Could you check the time in %s?",
		"What's the local time in %s?",
	}
	timeAs = []string{"It is %[1]s in %[2]s.", "In %[2]s it is %[1]s right now.", "The time in %[2]s is %[1]s.", "It's %[1]s (%[3]s) in %[2]s.", "The local time in %[2]s is %[1]s."}
	dateQs = []string{"What's the date today in %s?", "What is today's date in %s?", "What day is it in %s?", "What is the date in %s?", "Which date is it in %s?"}
	dateAs = []string{"Today is %[3]s, %[1]s in %[2]s.", "In %[2]s it is %[3]s %[1]s.", "The date in %[2]s is %[1]s."}
	dtQs   = []string{"What is the date and time in %s?", "Give me the current date and time in %s.", "What's the date and time now in %s?"}
	dtAs   = []string{"In %[2]s it is %[1]s.", "It is %[1]s (%[3]s) in %[2]s.", "The date and time in %[2]s: %[1]s."}
)

// weekday pulls the weekday out of a current_time result such as
// "14:32:10 (Tuesday, Asia/Tokyo)".
func weekday(result string) string {
	_, after, ok := strings.Cut(result, " (")
	if !ok {
		return ""
	}
	w, _, _ := strings.Cut(after, ",")
	return w
}

func timeQuestion(r *rand.Rand) toolQ {
	c := pick(r, Cities)
	place, zone := c[0], c[1]
	if r.IntN(12) == 0 { // the zone name itself
		place = zone
	}
	mk := func(q string, args string, as []string, where string) toolQ {
		return toolQ{question: q, tool: tools.CurrentTimeTool, args: args,
			answer: func(r *rand.Rand, result, key string) string {
				return fmt.Sprintf(pick(r, as), key, where, weekday(result))
			}}
	}
	x := r.Float64()
	switch {
	case x < 0.50:
		return mk(fmt.Sprintf(pick(r, timeQs), place), argsJSON("timezone", zone, "format", "time"), timeAs, place)
	case x < 0.68:
		return mk(fmt.Sprintf(pick(r, dateQs), place), argsJSON("timezone", zone, "format", "date"), dateAs, place)
	case x < 0.80:
		return mk(fmt.Sprintf(pick(r, dtQs), place), argsJSON("timezone", zone, "format", "datetime"), dtAs, place)
	case x < 0.86:
		q := pick(r, []string{"What time is it?", "What's the time right now?", "What time is it now?", "Tell me the current time."})
		return mk(q, argsJSON("format", "time"), []string{"It is %[1]s UTC.", "It's %[1]s (UTC) right now.", "The time is %[1]s UTC."}, "UTC")
	case x < 0.91:
		q := pick(r, []string{"What time is it in UTC?", "What is the current UTC time?", "Current time in UTC?"})
		return mk(q, argsJSON("timezone", "UTC", "format", "time"), []string{"It is %[1]s UTC.", "The UTC time is %[1]s."}, "UTC")
	case x < 0.95:
		q := pick(r, []string{"What is the current Unix timestamp?", "Give me the unix time.", "What's the Unix time now?"})
		return mk(q, argsJSON("format", "unix"), []string{"The current Unix timestamp is %[1]s.", "It is %[1]s seconds since the epoch."}, "")
	default:
		q := fmt.Sprintf(pick(r, []string{"What is the current time in %s in RFC 3339 format?", "Give me an RFC 3339 timestamp for %s."}), place)
		return mk(q, argsJSON("timezone", zone), []string{"In %[2]s it is %[1]s.", "Here it is: %[1]s."}, place)
	}
}

// ---- unit_convert ----

// unitWords are the ways a question names a unit, grouped by dimension; each
// is a name unit_convert accepts.
var unitWords = map[string][][]string{
	"length": {{"km", "kilometers", "kilometres"}, {"mi", "miles"}, {"m", "meters", "metres"}, {"ft", "feet"},
		{"inches"}, {"cm", "centimeters"}, {"yd", "yards"}, {"mm", "millimeters"}, {"nautical miles"}},
	"mass":        {{"kg", "kilograms", "kilos"}, {"lb", "lbs", "pounds"}, {"g", "grams"}, {"oz", "ounces"}, {"st", "stone"}, {"tonnes"}},
	"temperature": {{"C", "Celsius"}, {"F", "Fahrenheit"}, {"K", "kelvin"}},
	"time":        {{"h", "hours"}, {"min", "minutes"}, {"s", "seconds"}, {"d", "days"}, {"wk", "weeks"}, {"years"}},
}

var unitDims = []string{"length", "length", "mass", "mass", "temperature", "time"}

var (
	unitQs = []string{
		"Convert %[1]s %[2]s to %[3]s.", "How many %[3]s is %[1]s %[2]s?", "How many %[3]s are in %[1]s %[2]s?",
		"What is %[1]s %[2]s in %[3]s?", "%[1]s %[2]s in %[3]s?", "Please convert %[1]s %[2]s into %[3]s.",
		"Can you convert %[1]s %[2]s to %[3]s?", "What's %[1]s %[2]s in %[3]s?", "convert %[1]s %[2]s to %[3]s",
	}
	tempQs = []string{
		"What is %[1]s degrees %[2]s in %[3]s?", "Convert %[1]s degrees %[2]s to %[3]s.",
		"%[1]s degrees %[2]s is how much in %[3]s?", "What is %[1]s %[2]s in %[3]s?",
	}
	unitAs = []string{"%[1]s %[2]s is %[4]s.", "That is %[4]s.", "%[5]s.", "It comes to %[4]s.", "%[1]s %[2]s = %[4]s."}
)

func unitQuestion(r *rand.Rand) toolQ {
	dim := pick(r, unitDims)
	ws := unitWords[dim]
	i := r.IntN(len(ws))
	j := r.IntN(len(ws) - 1)
	if j >= i {
		j++
	}
	from, to := pick(r, ws[i]), pick(r, ws[j])
	var v float64
	switch x := r.Float64(); {
	case dim == "temperature":
		v = float64(r.IntN(141) - 40)
		if from == "K" || from == "kelvin" {
			v = float64(200 + r.IntN(200))
		}
	case x < 0.6:
		v = float64(1 + r.IntN(100))
	case x < 0.85:
		v = float64(100 + r.IntN(1900))
	default:
		v = float64(r.IntN(100)) + float64(1+r.IntN(9))/10
	}
	vs := strconv.FormatFloat(v, 'f', -1, 64)
	var q string
	if dim == "temperature" && r.IntN(2) == 0 {
		q = fmt.Sprintf(pick(r, tempQs), vs, from, to)
	} else {
		q = fmt.Sprintf(pick(r, unitQs), vs, from, to)
	}
	return toolQ{
		question: q,
		tool:     tools.UnitConvertTool,
		args:     argsJSON("value", v, "from", from, "to", to),
		answer: func(r *rand.Rand, result, key string) string {
			return fmt.Sprintf(pick(r, unitAs), vs, from, to, key, result)
		},
	}
}

// ---- no tool ----

var (
	greetings   = []string{"Hi!", "Hello", "Hello!", "Hey there", "Good morning!", "Hi, how are you?", "hey", "Good evening."}
	greetAs     = []string{"Hello! I can do arithmetic, tell the time anywhere and convert units. What would you like to know?", "Hi! How can I help you today?"}
	thanks      = []string{"Thanks!", "Thank you very much.", "thanks", "Great, thank you!", "Perfect, thanks."}
	thanksAs    = []string{"You're welcome!", "Glad I could help!", "Any time!"}
	identityQs  = []string{"Who are you?", "What's your name?", "What can you do?", "What are you?", "Are you a human?"}
	identityAs  = []string{"I am a tiny tool-calling model served by pitstop. I can use a calculator, a clock and a unit converter."}
	capitals    = [][2]string{{"France", "Paris"}, {"Japan", "Tokyo"}, {"Italy", "Rome"}, {"Spain", "Madrid"}, {"Germany", "Berlin"}, {"Egypt", "Cairo"}, {"Canada", "Ottawa"}, {"Australia", "Canberra"}, {"Brazil", "Brasilia"}, {"Kenya", "Nairobi"}, {"Peru", "Lima"}, {"Greece", "Athens"}, {"Portugal", "Lisbon"}, {"Ireland", "Dublin"}, {"Austria", "Vienna"}, {"Poland", "Warsaw"}, {"Finland", "Helsinki"}, {"Sweden", "Stockholm"}, {"Norway", "Oslo"}, {"China", "Beijing"}, {"India", "New Delhi"}, {"Mexico", "Mexico City"}, {"Argentina", "Buenos Aires"}, {"Chile", "Santiago"}, {"Thailand", "Bangkok"}, {"South Korea", "Seoul"}, {"Russia", "Moscow"}, {"Turkey", "Ankara"}, {"Iran", "Tehran"}, {"Indonesia", "Jakarta"}}
	capitalQs   = []string{"What is the capital of %s?", "What's the capital of %s?", "Which city is the capital of %s?", "capital of %s?"}
	opposites   = [][2]string{{"hot", "cold"}, {"big", "small"}, {"up", "down"}, {"fast", "slow"}, {"happy", "sad"}, {"light", "dark"}, {"open", "closed"}, {"early", "late"}, {"old", "new"}, {"rich", "poor"}, {"hard", "soft"}, {"full", "empty"}, {"wet", "dry"}, {"loud", "quiet"}, {"left", "right"}}
	facts       = [][2]string{{"What color is the sky?", "The sky is usually blue."}, {"How many days are in a week?", "There are 7 days in a week."}, {"How many legs does a spider have?", "A spider has 8 legs."}, {"What is water made of?", "Water is made of hydrogen and oxygen."}, {"Which planet is closest to the sun?", "Mercury is the closest planet to the sun."}, {"What language is spoken in Brazil?", "Portuguese is spoken in Brazil."}, {"How many months are in a year?", "There are 12 months in a year."}, {"What is the largest ocean?", "The Pacific is the largest ocean."}, {"Tell me a joke.", "Why did the math book look sad? It had too many problems."}, {"Tell me a fun fact.", "Octopuses have three hearts."}, {"What do bees make?", "Bees make honey."}, {"Write a haiku about rain.", "Soft rain on the roof, / a quiet song for the night, / the garden drinks deep."}, {"What is your favorite color?", "I do not have one, but many people like blue."}, {"Can you help me?", "Of course! Ask me a question, a calculation, the time somewhere or a unit conversion."}, {"Say something nice.", "You are doing great today!"}, {"How are you?", "I am fine, thank you! How can I help?"}, {"What is the boiling point of water at sea level in Celsius?", "Water boils at 100 degrees Celsius at sea level."}, {"Who wrote Romeo and Juliet?", "William Shakespeare wrote Romeo and Juliet."}, {"What is the chemical symbol for gold?", "The chemical symbol for gold is Au."}, {"Goodbye!", "Goodbye! Have a nice day."}}
	translation = [][3]string{{"hello", "French", "Bonjour."}, {"thank you", "Spanish", "Gracias."}, {"good night", "German", "Gute Nacht."}, {"cat", "French", "Chat."}, {"dog", "Spanish", "Perro."}, {"water", "Italian", "Acqua."}, {"yes", "German", "Ja."}}
)

func noToolQA(r *rand.Rand) (string, string) {
	switch r.IntN(8) {
	case 0:
		return pick(r, greetings), pick(r, greetAs)
	case 1:
		return pick(r, thanks), pick(r, thanksAs)
	case 2:
		return pick(r, identityQs), pick(r, identityAs)
	case 3, 4:
		c := pick(r, capitals)
		return fmt.Sprintf(pick(r, capitalQs), c[0]), fmt.Sprintf("The capital of %s is %s.", c[0], c[1])
	case 5:
		o := pick(r, opposites)
		if r.IntN(2) == 0 {
			o[0], o[1] = o[1], o[0]
		}
		return fmt.Sprintf(pick(r, []string{"What is the opposite of %s?", "Give me the opposite of %s.", "Opposite of %s?"}), o[0]),
			fmt.Sprintf("The opposite of %s is %s.", o[0], o[1])
	case 6:
		t := pick(r, translation)
		return fmt.Sprintf("How do you say %s in %s?", t[0], t[1]), t[2]
	default:
		f := pick(r, facts)
		return f[0], f[1]
	}
}
