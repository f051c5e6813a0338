// Package docs holds brine's user documentation (one Markdown page per topic, linked from the
// README) and the test that keeps it true: every code block of the README and of these pages is
// built, run, or checked against the commands and files it names (see docs_test.go for the fence
// info strings it understands). It has no code of its own.
package docs
