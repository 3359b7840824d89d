package main

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"fmt"
	"math"
	"math/rand"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
)

var _ = []interface{}{bufio.NewReader, bytes.NewBuffer, md5.Sum, fmt.Sprint, math.Abs, rand.Intn, os.Exit,
	regexp.MustCompile, sort.Ints, strconv.Itoa, strings.Split, time.Now, unicode.IsUpper}

func TestWarm(t *testing.T) {
	assert.New(t).Equal(1, 1)
}
