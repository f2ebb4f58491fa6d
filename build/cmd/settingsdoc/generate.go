package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// settings is everything the reference lists.
type settings struct {
	flags []flagSetting
	// env holds, by name, the files that read each variable other than as
	// a flag's default; shell defaults holds the scripts' defaults.
	env          map[string][]string
	tests        map[string]bool // variables read by tests only
	shellDefault map[string]string
	up           upSettings
	mains        []string // directories of the Go main packages
	root         string
}

// generate reads the tree at root and returns docs/settings.md. It fails
// when the code and descriptions.go disagree: a command or a variable
// without a description, or a description of one that no code has.
func generate(root string) ([]byte, error) {
	s, err := collect(root)
	if err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.render(), nil
}

func collect(root string) (*settings, error) {
	t, err := loadTree(root)
	if err != nil {
		return nil, err
	}
	s := &settings{root: root, env: map[string][]string{}, tests: map[string]bool{}, shellDefault: map[string]string{}}
	if s.flags, err = goFlags(t); err != nil {
		return nil, err
	}
	pyFlags, pyReads, err := pythonSettings(t)
	if err != nil {
		return nil, err
	}
	s.flags = append(s.flags, pyFlags...)
	shell, err := shellSettings(t)
	if err != nil {
		return nil, err
	}
	if s.up, err = scanUp(t, s.flags); err != nil {
		return nil, err
	}
	for _, p := range t.sortedPkgs() {
		if p.name == "main" && slices.ContainsFunc(p.files, func(f *goFile) bool { return !f.test }) {
			s.mains = append(s.mains, p.dir)
		}
	}
	reads := goEnvReads(t)
	reads = append(reads, pyReads...)
	for _, sh := range shell {
		reads = append(reads, sh.envRead)
		s.shellDefault[sh.Name] = sh.Default
	}
	testOnly := map[string]bool{}
	for _, r := range reads {
		if s.isFlagDefault(r) {
			continue
		}
		if _, ok := testOnly[r.Name]; !ok {
			testOnly[r.Name] = true
		}
		testOnly[r.Name] = testOnly[r.Name] && r.Test
		if !slices.Contains(s.env[r.Name], r.File) {
			s.env[r.Name] = append(s.env[r.Name], r.File)
		}
	}
	s.tests = testOnly
	return s, nil
}

// isFlagDefault reports whether r reads a flag's default: inside the
// flag's definition, or in the same file as a flag whose usage names the
// variable.
func (s *settings) isFlagDefault(r envRead) bool {
	for _, f := range s.flags {
		if f.Env != r.Name || f.File != r.File {
			continue
		}
		return true
	}
	return false
}

// check compares the code with descriptions.go.
func (s *settings) check() error {
	var errs []error
	dirs := map[string]bool{}
	for _, f := range s.flags {
		dirs[f.Dir] = true
	}
	for _, d := range s.mains {
		dirs[d] = true
	}
	documented := map[string]bool{}
	for _, c := range commandDocs {
		documented[c.Dir] = true
		if !dirs[c.Dir] {
			errs = append(errs, fmt.Errorf("descriptions.go: command %s: no such command in the code", c.Dir))
		}
	}
	for d := range dirs {
		if !documented[d] {
			errs = append(errs, fmt.Errorf("command %s has no entry in commandDocs (build/cmd/settingsdoc/descriptions.go)", d))
		}
	}
	keys := map[string]bool{}
	for _, c := range components {
		keys[c.Key] = true
	}
	for name, files := range s.env {
		if _, ok := envDocs[name]; !ok {
			errs = append(errs, fmt.Errorf("%s reads %s, which envDocs (build/cmd/settingsdoc/descriptions.go) does not describe", strings.Join(files, ", "), name))
		}
	}
	for name, d := range envDocs {
		if _, ok := s.env[name]; !ok {
			errs = append(errs, fmt.Errorf("descriptions.go describes %s, which no code reads (other than as a flag's default)", name))
		}
		if !keys[d.Component] {
			errs = append(errs, fmt.Errorf("descriptions.go: %s: no component %q", name, d.Component))
		}
	}
	errs = append(errs, checkLibraries(s.root)...)
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}
