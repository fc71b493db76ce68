package sso_test

import (
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
