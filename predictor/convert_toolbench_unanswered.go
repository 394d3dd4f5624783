package predictor

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Two of the 15 answer files of ToolBench's data_example hold a whole
// search tree whose search never answered: no train_messages, so no kept
// path to take the system prompt and the query from, and
// ConvertToolBenchTree skips them. Their turns are model calls like any
// other (67 turns, 23 of them retries), and since no model was trained or
// tuned on them they are a check on data the served rules were not built
// on. ConvertToolBenchTreeUnanswered converts them with the prompt
// rebuilt: the system prompt ToolBench's DFS runner writes (the text every
// answered file of data_example shares, then one line per tool) and the
// query (answer_generation.query) as the user's message, framed as the
// answered files frame it.

// toolBenchSystemPrompt is the system prompt every answered file of
// data_example opens with, up to its list of tools.
const toolBenchSystemPrompt = "You are AutoGPT, you can use many tools(functions) to do the following task.\nFirst I will give you the task description, and your task start.\nAt each step, you need to give your thought to analyze the status now and what to do next, with a function call to actually excute your step.\nAfter the call, you will get the call result, and you are now in a new state.\nThen you will analyze your status now, then decide what to do next...\nAfter many (Thought-call) pairs, you finally perform the task, then you can give your finial answer.\nRemember: \n1.the state change is irreversible, you can't go back to one of the former state, if you want to restart the task, say \"I give up and restart\".\n2.All the thought is short, at most in 5 sentence.\n3.You can do more then one trys, so if your plan is to continusly try some conditions, you can do one of the conditions per try.\nLet's Begin!\nTask description: You should use functions to help handle the real time user querys. Remember:\n1.ALWAYS call \"Finish\" function at the end of the task. And the final answer should contain enough information to show to the user,If you can't handle the task, or you find that function calls always fail(the function is not valid now), use function Finish->give_up_and_restart.\n2.Do not use origin tool names, use only subfunctions' names.\nYou have access of the following tools:\n"

// ConvertToolBenchTreeUnanswered is ConvertToolBenchTree for an answer
// file whose search never answered (no train_messages): the preamble is
// rebuilt from answer_generation.query and its functions. The tools' list
// in the system prompt names each tool (a function "x_for_tool" is tool's,
// in the order the functions first name it); its description, which the
// answer file does not hold, is left out, so the system prompt is a few
// tokens shorter than the one the model saw. A file that answered, or one
// with no query, wraps ErrNoTrajectory: it is ConvertToolBenchTree's, or
// nothing's.
func ConvertToolBenchTreeUnanswered(data []byte, id, source string, count func(string) int) ([]TraceRecord, error) {
	var f struct {
		AnswerGeneration struct {
			TrainMessages [][]ChatMessage `json:"train_messages"`
			Function      []ChatTool      `json:"function"`
			Query         string          `json:"query"`
		} `json:"answer_generation"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("toolbench answer %s: %w", id, err)
	}
	ag := f.AnswerGeneration
	if len(ag.TrainMessages) > 0 {
		return nil, fmt.Errorf("%w: toolbench answer %s answered (ConvertToolBenchTree converts it)", ErrNoTrajectory, id)
	}
	if ag.Query == "" {
		return nil, fmt.Errorf("%w: toolbench answer %s has neither train_messages nor a query", ErrNoTrajectory, id)
	}
	tools := ag.Function
	if tools == nil {
		tools = []ChatTool{}
	}
	preamble := []ChatMessage{
		{Role: "system", Content: toolBenchSystemPrompt + toolBenchToolList(tools)},
		{Role: "user", Content: "\n" + ag.Query + "\nBegin!\n"},
	}
	return convertToolBenchTree(data, id, source, count, preamble, tools)
}

// toolBenchToolList is the system prompt's list of tools, one "k.tool: "
// line each, the tools named by the functions' "_for_tool" suffixes
// (Finish is no tool's).
func toolBenchToolList(fns []ChatTool) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, fn := range fns {
		i := strings.LastIndex(fn.Name, "_for_")
		if i < 0 {
			continue
		}
		tool := fn.Name[i+len("_for_"):]
		if seen[tool] {
			continue
		}
		seen[tool] = true
		fmt.Fprintf(&b, "%d.%s: \n", len(seen), tool)
	}
	return b.String()
}
