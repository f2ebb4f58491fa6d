package main

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

//go:embed llm_sandbox_peer.py
var peerScript []byte

// peer drives llm_sandbox_peer.py, one request at a time.
type peer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// peerAnswer is one answer line of the peer script.
type peerAnswer struct {
	OpenMS  float64 `json:"open_ms"`
	FirstMS float64 `json:"first_ms"`
	CloseMS float64 `json:"close_ms"`
	MS      float64 `json:"ms"`
	Exit    int     `json:"exit"`
	Error   string  `json:"error"`
}

// startPeer runs the peer script with python (a Python that has
// llm-sandbox) on image. A python of "" means no peer: it returns nil.
func startPeer(python, image, dir string) (*peer, error) {
	if python == "" {
		return nil, nil
	}
	script := filepath.Join(dir, "llm_sandbox_peer.py")
	if err := os.WriteFile(script, peerScript, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(python, script, image)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the llm-sandbox peer: %w", err)
	}
	return &peer{cmd: cmd, in: in, out: bufio.NewScanner(out)}, nil
}

// ask sends one request and reads its answer.
func (p *peer) ask(req string) (peerAnswer, error) {
	if _, err := fmt.Fprintln(p.in, req); err != nil {
		return peerAnswer{}, err
	}
	if !p.out.Scan() {
		return peerAnswer{}, errors.Join(errors.New("the llm-sandbox peer stopped"), p.out.Err())
	}
	var a peerAnswer
	if err := json.Unmarshal(p.out.Bytes(), &a); err != nil {
		return a, err
	}
	if a.Error != "" {
		return a, fmt.Errorf("llm-sandbox %s: %s", req, a.Error)
	}
	return a, nil
}

// stop ends the peer script and waits for it.
func (p *peer) stop() {
	if p == nil {
		return
	}
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
