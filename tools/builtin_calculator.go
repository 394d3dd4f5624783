package tools

import (
	"context"

	"github.com/pitstop-llm/pitstop/tools/calc"
)

type calculatorArgs struct {
	Expression string `json:"expression" jsonschema:"description=Arithmetic expression\\, e.g. (2+3)*4^2 or sqrt(2)/3. Operators + - * / % ^ and parentheses; functions sqrt abs ln log10 exp sin cos tan (radians) min max round floor ceil; constants pi and e.,minLength=1"`
}

// NewCalculatorTool returns the calculator tool: an exact arithmetic
// evaluator (see package calc).
func NewCalculatorTool() (*Tool, error) {
	return Func(CalculatorTool,
		"Evaluate an arithmetic expression exactly and return the number. Use it for any arithmetic instead of computing in your head.",
		func(_ context.Context, a calculatorArgs) (string, error) {
			return calc.Calculate(a.Expression)
		})
}
