package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

type scrapeArgs struct {
	URL               string   `json:"url" jsonschema:"description=Absolute http or https URL to start the crawl at."`
	MaxDepth          *int     `json:"max_depth,omitempty" jsonschema:"minimum=0,maximum=10,description=How many links away from the start page to go (0: the start page only). Default: 2."`
	MaxPages          int      `json:"max_pages,omitempty" jsonschema:"minimum=1,maximum=1000,description=The most pages to fetch. Default: 50."`
	Include           []string `json:"include,omitempty" jsonschema:"description=Regular expressions; when given, only URLs matching one of them are followed (the start page is always fetched)."`
	Exclude           []string `json:"exclude,omitempty" jsonschema:"description=Regular expressions; URLs matching one of them are not followed."`
	AllowOtherHosts   bool     `json:"allow_other_hosts,omitempty" jsonschema:"description=Follow links to other hosts too. Default: stay on the start URL's host."`
	IgnoreRobotsTxt   bool     `json:"ignore_robots_txt,omitempty" jsonschema:"description=Fetch pages that the site's robots.txt disallows. Default: robots.txt is respected."`
	DelayMillis       *int     `json:"delay_ms,omitempty" jsonschema:"minimum=0,maximum=60000,description=Politeness delay between two requests in milliseconds. Default: 200."`
	TimeBudgetSeconds int      `json:"time_budget_seconds,omitempty" jsonschema:"minimum=1,maximum=3600,description=Total time for the crawl; when it is spent the pages fetched so far are returned. Default: 120."`
	PageTimeoutSecs   int      `json:"page_timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=600,description=How long to wait for one page. Default: 30."`
}

func (w *Web) scrapeWebsite() tools.Tool {
	return tools.New(Family, "scrape_website",
		"Crawl a website from a URL and return one markdown document: per page its title and URL, then its main content with navigation, headers, "+
			"footers and scripts stripped (tables, lists, links and code blocks kept). Stays on the start host by default and respects robots.txt; "+
			"bounded by depth, page count and a time budget. Markdown over the observation limit is written to a file in the workspace.",
		func(ctx context.Context, a scrapeArgs) (tools.Result, error) {
			s, err := w.newScrape(a)
			if err != nil {
				return tools.Result{}, err
			}
			ctx, cancel := context.WithTimeout(ctx, s.budget)
			defer cancel()
			start := time.Now()
			pages, err := s.run(ctx)
			if err != nil {
				return tools.Result{}, err
			}
			summary := s.summary(len(pages), time.Since(start), ctx.Err() != nil)
			return w.deliver("scrape-"+slug(s.start.Host), summary+"\n"+render(pages), len(pages))
		})
}

// scrape is one crawl: its settings and what it found so far. Colly runs it
// synchronously, so its callbacks need no locks.
type scrape struct {
	w        *Web
	args     scrapeArgs
	start    *url.URL
	include  []*regexp.Regexp
	exclude  []*regexp.Regexp
	depth    int
	maxPages int
	delay    time.Duration
	budget   time.Duration

	pages    []Page
	seen     map[[32]byte]string // content hash -> URL of the first page with it
	notes    []string            // pages skipped or failed, one line each
	startErr error               // why the start page failed, if it did
}

func (w *Web) newScrape(a scrapeArgs) (*scrape, error) {
	if err := checkURL(a.URL); err != nil {
		return nil, err
	}
	start, _ := url.Parse(a.URL)
	start.Fragment = ""
	s := &scrape{w: w, args: a, start: start, depth: 2, maxPages: 50, delay: 200 * time.Millisecond,
		budget: seconds(a.TimeBudgetSeconds, 120), seen: map[[32]byte]string{}}
	if a.MaxDepth != nil {
		s.depth = *a.MaxDepth
	}
	if a.MaxPages > 0 {
		s.maxPages = a.MaxPages
	}
	if a.DelayMillis != nil {
		s.delay = time.Duration(*a.DelayMillis) * time.Millisecond
	}
	var err error
	if s.include, err = compileAll("include", a.Include); err != nil {
		return nil, err
	}
	if s.exclude, err = compileAll("exclude", a.Exclude); err != nil {
		return nil, err
	}
	return s, nil
}

func compileAll(arg string, patterns []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("%s pattern %q: %v: %w", arg, p, err, schemas.CodeInvalidArgs)
		}
		out = append(out, re)
	}
	return out, nil
}

// run crawls until the limits or ctx stop it and returns the pages in the
// order they were fetched. It fails only when the start page does.
func (s *scrape) run(ctx context.Context) ([]Page, error) {
	c := colly.NewCollector(
		colly.UserAgent(s.w.cfg.UserAgent),
		colly.MaxDepth(s.depth+1), // colly counts the start page as depth 1
		colly.MaxRequests(uint32(s.maxPages)),
		colly.MaxBodySize(int(s.w.cfg.MaxPageBytes)+1),
		colly.StdlibContext(ctx),
	)
	c.IgnoreRobotsTxt = s.args.IgnoreRobotsTxt
	if !s.args.AllowOtherHosts {
		c.AllowedDomains = []string{s.start.Hostname()}
	}
	c.WithTransport(newTransport())
	c.SetRequestTimeout(seconds(s.args.PageTimeoutSecs, 30))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Delay: s.delay}); err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	c.OnResponseHeaders(s.onHeaders)
	c.OnResponse(s.onResponse)
	c.OnError(s.onError)

	if err := c.Visit(s.start.String()); err != nil && s.startErr == nil {
		s.startErr = s.visitError(s.start.String(), err)
	}
	c.Wait()
	if len(s.pages) == 0 && s.startErr != nil {
		return nil, s.startErr
	}
	return s.pages, nil
}

func (s *scrape) onHeaders(r *colly.Response) {
	if r.StatusCode >= 400 {
		return // onError reports it
	}
	ct := r.Headers.Get("Content-Type")
	if !isHTML(ct) {
		s.fail(r.Request.URL.String(), fmt.Errorf("%s: content type %q: %w", r.Request.URL, ct, ErrNotHTML))
		r.Request.Abort()
	}
}

func (s *scrape) onError(r *colly.Response, err error) {
	if errors.Is(err, colly.ErrAbortedAfterHeaders) {
		return // onHeaders said why
	}
	u := r.Request.URL.String()
	if r.StatusCode >= 400 {
		err = statusError(u, r.StatusCode)
	} else {
		err = classify(u, err)
	}
	s.fail(u, err)
}

func (s *scrape) onResponse(r *colly.Response) {
	u := r.Request.URL.String()
	if len(r.Body) > int(s.w.cfg.MaxPageBytes) {
		s.fail(u, fmt.Errorf("%s: more than %d bytes: %w", u, s.w.cfg.MaxPageBytes, ErrPageTooLarge))
		return
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		s.fail(u, fmt.Errorf("parse HTML of %s: %w", u, err))
		return
	}
	var links []string
	doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		links = append(links, r.Request.AbsoluteURL(href))
	})
	page, err := docToMarkdown(u, doc)
	if err != nil {
		s.fail(u, err)
		return
	}
	sum := sha256.Sum256([]byte(page.Markdown))
	if first, dup := s.seen[sum]; dup {
		s.notes = append(s.notes, fmt.Sprintf("- %s: same content as %s, left out", u, first))
	} else {
		s.seen[sum] = u
		s.pages = append(s.pages, page)
	}
	for _, link := range links {
		if next, ok := s.follow(link); ok {
			if err := r.Request.Visit(next); err != nil {
				s.skip(next, err)
			}
		}
	}
}

// follow says whether a link is worth visiting and returns it without its
// fragment.
func (s *scrape) follow(link string) (string, bool) {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	u.Fragment = ""
	next := u.String()
	for _, re := range s.exclude {
		if re.MatchString(next) {
			return "", false
		}
	}
	if len(s.include) == 0 {
		return next, true
	}
	for _, re := range s.include {
		if re.MatchString(next) {
			return next, true
		}
	}
	return "", false
}

// skip records why colly refused a link, when the reason is worth telling:
// robots.txt, the page limit. Links already visited, too deep or on another
// host are left out silently.
func (s *scrape) skip(u string, err error) {
	switch {
	case errors.Is(err, colly.ErrRobotsTxtBlocked):
		s.notes = append(s.notes, fmt.Sprintf("- %s: disallowed by robots.txt, not fetched", u))
	case errors.Is(err, colly.ErrMaxRequests):
		s.notes = append(s.notes, fmt.Sprintf("- %s: not fetched, the page limit of %d was reached", u, s.maxPages))
	}
}

// visitError is the error of a start page that colly refused to visit.
func (s *scrape) visitError(u string, err error) error {
	if errors.Is(err, colly.ErrRobotsTxtBlocked) {
		return fmt.Errorf("%s: disallowed by robots.txt (set ignore_robots_txt to fetch it anyway): %w", u, schemas.CodeAccessDenied)
	}
	return classify(u, err)
}

func (s *scrape) fail(u string, err error) {
	if u == s.start.String() && s.startErr == nil {
		s.startErr = err
	}
	s.notes = append(s.notes, "- "+err.Error())
}

// summary is the observation's first lines: what was crawled and what was
// left out.
func (s *scrape) summary(pages int, took time.Duration, outOfTime bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scraped %d pages from %s in %s (max depth %d, max pages %d).\n", pages, s.start, took.Round(time.Millisecond), s.depth, s.maxPages)
	if outOfTime {
		fmt.Fprintf(&b, "The time budget of %s ran out; the pages fetched until then follow.\n", s.budget)
	}
	if len(s.notes) > 0 {
		fmt.Fprintf(&b, "Skipped or failed (%d):\n%s\n", len(s.notes), strings.Join(s.notes, "\n"))
	}
	return b.String()
}
