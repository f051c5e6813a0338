package tablestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

const testSecret = "S3cr3tS3cr3tS3cr3t"

func TestConfigRedaction(t *testing.T) {
	cfg := Config{
		Endpoint: "https://i.cn-hangzhou.ots.aliyuncs.com", Instance: "i",
		AccessKeyID: "LTAI5tAbCdEfGh", AccessKeySecret: testSecret, SecurityToken: "tok3ntok3ntok3n",
	}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("cfg", "config", cfg)
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", cfg), "%#v": fmt.Sprintf("%#v", cfg),
		"pointer %v": fmt.Sprintf("%v", &cfg),
		"slog":       logged.String(), "json": string(js),
	}
	for how, out := range outs {
		for _, secret := range []string{testSecret, "tok3ntok3ntok3n", "LTAI5tAbCdEfGh"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s prints a credential: %s", how, out)
			}
		}
	}
	if !strings.Contains(outs["%v"], "LTAI***") || !strings.Contains(outs["%v"], cfg.Endpoint) {
		t.Errorf("String lost the useful parts: %s", outs["%v"])
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr bool
	}{
		{"unset", map[string]string{}, true},
		{"complete", map[string]string{EnvEndpoint: "http://x", EnvInstance: "i", EnvAccessKeyID: "id", EnvAccessKeySecret: testSecret}, false},
		{"no secret", map[string]string{EnvEndpoint: "http://x", EnvInstance: "i", EnvAccessKeyID: "id"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{EnvEndpoint, EnvInstance, EnvAccessKeyID, EnvAccessKeySecret, EnvSecurityToken} {
				t.Setenv(k, tt.env[k])
			}
			cfg, err := ConfigFromEnv()
			if tt.wantErr {
				if !errors.Is(err, ErrNotConfigured) {
					t.Fatalf("err = %v, want ErrNotConfigured", err)
				}
				if strings.Contains(err.Error(), "http://x") || strings.Contains(err.Error(), testSecret) {
					t.Errorf("error shows values: %v", err)
				}
				return
			}
			if err != nil || cfg.AccessKeySecret != testSecret || cfg.Instance != "i" {
				t.Fatalf("ConfigFromEnv = %v, %v", cfg, err)
			}
		})
	}
}

func TestOpenValidates(t *testing.T) {
	_, err := Open(t.Context(), Config{Endpoint: "http://127.0.0.1:1", AccessKeySecret: testSecret})
	if !errors.Is(err, backends.ErrInvalidArgument) || strings.Contains(err.Error(), testSecret) {
		t.Fatalf("Open with missing fields = %v", err)
	}
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		code       string
		idempotent bool
		sentinel   error
		retryable  bool
	}{
		{codeNotExist, true, backends.ErrTableNotFound, false},
		{codeAlreadyExist, false, backends.ErrTableExists, false},
		{codeParamInvalid, false, backends.ErrInvalidArgument, false},
		{codeServerBusy, false, nil, true},
		{codePartitionUnav, false, nil, true},
		{codeQuota, false, nil, true},
		{codeConflict, false, nil, true},
		{codeNoCapacity, false, nil, true},
		{codeTableNotReady, false, nil, true},
		{codeTimeout, false, nil, false},
		{codeTimeout, true, nil, true},
		{codeInternalServer, true, nil, true},
		{"OTSAuthFailed", true, nil, false},
	}
	for _, tt := range tests {
		oe := &ots.OtsError{Code: tt.code, Message: "m", RequestId: "r"}
		err := mapError("op", fmt.Errorf("sdk: %w", oe), tt.idempotent)
		if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
			t.Errorf("%s: %v does not wrap %v", tt.code, err, tt.sentinel)
		}
		if driverkit.IsRetryable(err) != tt.retryable {
			t.Errorf("%s (idempotent %v): retryable = %v, want %v", tt.code, tt.idempotent, !tt.retryable, tt.retryable)
		}
		var got *ots.OtsError
		if !errors.As(err, &got) || got.Code != tt.code {
			t.Errorf("%s: errors.As lost the OtsError: %v", tt.code, err)
		}
	}
}
