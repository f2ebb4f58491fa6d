package data

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"unicode"
)

// Embedder turns texts into dense vectors of a fixed dimension.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dim is the vectors' dimension.
	Dim() int
}

// HashEmbedder is the offline default: a feature-hashed bag of lower-cased
// words and of character trigrams of each word, signed, into Dim buckets,
// L2-normalised. It needs no model and no download and is deterministic.
// Its limits: it knows no synonyms or meaning (only shared words and word
// pieces make texts close), collisions add noise as vocabularies grow, and
// it is language-agnostic only as far as letters and digits go. Configure
// an OpenAI-compatible endpoint (OpenAIEmbedder) for semantic search.
type HashEmbedder struct{ D int }

// DefaultHashDim is HashEmbedder's dimension when D is zero.
const DefaultHashDim = 256

// Dim implements Embedder.
func (h HashEmbedder) Dim() int {
	if h.D <= 0 {
		return DefaultHashDim
	}
	return h.D
}

// Embed implements Embedder.
func (h HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.vector(t)
	}
	return out, nil
}

func (h HashEmbedder) vector(text string) []float32 {
	d := h.Dim()
	v := make([]float32, d)
	add := func(feature string, w float32) {
		f := fnv.New64a()
		f.Write([]byte(feature))
		x := f.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(d)] += sign * w
	}
	for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		add("w:"+word, 1)
		padded := []rune("^" + word + "$")
		for i := 0; i+3 <= len(padded); i++ {
			add("c:"+string(padded[i:i+3]), 0.5)
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		n := float32(math.Sqrt(norm))
		for i := range v {
			v[i] /= n
		}
	}
	return v
}

// ErrEmbed means the embedding endpoint failed.
var ErrEmbed = errors.New("embedding")

// OpenAIEmbedder asks an OpenAI-compatible /embeddings endpoint.
type OpenAIEmbedder struct {
	// URL is the API base, e.g. https://api.openai.com/v1.
	URL, Model, Key string
	// D is the model's dimension; Embed learns it from the first answer
	// when zero.
	D      int
	Client *http.Client
}

// Dim implements Embedder. It is 0 until known.
func (o *OpenAIEmbedder) Dim() int { return o.D }

// Embed implements Embedder.
func (o *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, _ := json.Marshal(map[string]any{"model": o.Model, "input": texts})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.URL, "/")+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmbed, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.Key != "" {
		req.Header.Set("Authorization", "Bearer "+o.Key)
	}
	c := o.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmbed, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s answered %s", ErrEmbed, o.URL, resp.Status)
	}
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: decode: %w", ErrEmbed, err)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbed, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(out) {
			return nil, fmt.Errorf("%w: index %d out of range", ErrEmbed, d.Index)
		}
		out[d.Index] = d.Embedding
		if o.D == 0 {
			o.D = len(d.Embedding)
		}
	}
	return out, nil
}

// EmbedderFromEnv returns the OpenAI-compatible embedder when
// SANDOX_EMBED_URL is set (with SANDOX_EMBED_MODEL, SANDOX_EMBED_KEY and
// SANDOX_EMBED_DIM), and the offline HashEmbedder otherwise.
func EmbedderFromEnv(getenv func(string) string) Embedder {
	url := getenv("SANDOX_EMBED_URL")
	if url == "" {
		return HashEmbedder{}
	}
	var dim int
	fmt.Sscan(getenv("SANDOX_EMBED_DIM"), &dim)
	return &OpenAIEmbedder{URL: url, Model: getenv("SANDOX_EMBED_MODEL"), Key: getenv("SANDOX_EMBED_KEY"), D: dim}
}
