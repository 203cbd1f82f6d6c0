// s3probe is the lab's S3 probe: the object store's end-to-end test (lab/tests/
// test_lab_object_store_e2e.py) runs it in a pod of a team namespace, with the team's Secret as
// its environment (envFrom), to read an object with the team's own credentials. Standard
// library only (Signature Version 4 by hand, path-style requests), built by lab/k8s-build.
//
//	s3probe get BUCKET KEY SECONDS   GET the object with AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
//	                                 AWS_SECRET_ACCESS_KEY and AWS_REGION; print its size and
//	                                 SHA-256. Exit 0 on HTTP 200, 1 on another status, 2 when no
//	                                 connection opens within SECONDS (tried again until then)
//	s3probe -v                       print the version
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// version is set with -ldflags "-X main.version=..." by lab/k8s-build/build.sh.
var version = "unknown"

const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-v" {
		fmt.Printf("s3probe %s (gpurack lab)\n", version)
		return
	}
	if len(os.Args) != 5 || os.Args[1] != "get" {
		fmt.Fprintln(os.Stderr, "usage: s3probe get BUCKET KEY SECONDS | -v")
		os.Exit(64)
	}
	secs, err := strconv.ParseFloat(os.Args[4], 64)
	if err != nil || secs <= 0 {
		fmt.Fprintln(os.Stderr, "s3probe: SECONDS must be a positive number")
		os.Exit(64)
	}
	os.Exit(get(os.Args[2], os.Args[3], time.Duration(secs*float64(time.Second))))
}

func get(bucket, key string, timeout time.Duration) int {
	endpoint := strings.TrimRight(os.Getenv("AWS_ENDPOINT_URL"), "/")
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	u, err := url.Parse(endpoint + "/" + bucket + "/" + key)
	if err != nil || u.Host == "" {
		fmt.Fprintln(os.Stderr, "s3probe: AWS_ENDPOINT_URL is not a URL:", endpoint)
		return 64
	}
	deadline := time.Now().Add(timeout)
	for {
		status, body, err := fetch(u, region, time.Until(deadline))
		if err == nil {
			if status != http.StatusOK {
				fmt.Printf("s3probe: HTTP %d %s\n", status, errorCode(body))
				return 1
			}
			sum := sha256.Sum256(body)
			fmt.Printf("s3probe: ok %d bytes sha256 %s\n", len(body), hex.EncodeToString(sum[:]))
			return 0
		}
		if time.Until(deadline) < 500*time.Millisecond {
			fmt.Println("s3probe: no connection:", err)
			return 2
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func fetch(u *url.URL, region string, timeout time.Duration) (int, []byte, error) {
	client := &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{DialContext: (&net.Dialer{Timeout: timeout}).DialContext},
	}
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	sign(req, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), region, time.Now().UTC())
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

func hmacSHA256(key []byte, text string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(text))
	return m.Sum(nil)
}

// sign adds SigV4 headers for an unsigned-body GET (host, x-amz-date, x-amz-content-sha256).
func sign(req *http.Request, access, secret, region string, now time.Time) {
	amzDate := now.Format("20060102T150405Z")
	day := amzDate[:8]
	req.Header.Set("x-amz-date", amzDate)
	req.Header.Set("x-amz-content-sha256", emptySHA256)
	headers := "host:" + req.URL.Host + "\nx-amz-content-sha256:" + emptySHA256 + "\nx-amz-date:" + amzDate + "\n"
	signed := "host;x-amz-content-sha256;x-amz-date"
	canonical := strings.Join([]string{"GET", req.URL.EscapedPath(), "", headers, signed, emptySHA256}, "\n")
	scope := day + "/" + region + "/s3/aws4_request"
	sum := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	k := hmacSHA256(hmacSHA256(hmacSHA256(hmacSHA256([]byte("AWS4"+secret), day), region), "s3"), "aws4_request")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+access+"/"+scope+
		", SignedHeaders="+signed+", Signature="+hex.EncodeToString(hmacSHA256(k, toSign)))
}

// errorCode is the <Code> of an S3 error body, or empty.
func errorCode(body []byte) string {
	text := string(body)
	start := strings.Index(text, "<Code>")
	end := strings.Index(text, "</Code>")
	if start < 0 || end < start {
		return ""
	}
	return text[start+len("<Code>") : end]
}
