// Package testutil holds test helpers that the tests of several packages
// share: fake OpenAI-compatible backends, a buffer that goroutines write
// while a test reads it, JSON Schema checks. Only tests import it (the
// layer test in architecture_test.go fails a program package that does);
// it imports nothing of the module, so any package's tests may use it.
package testutil
