// Package onnxpb holds the Go types of the ONNX model format (onnx.proto),
// generated with protoc and protoc-gen-go so that the build needs neither.
//
// onnx.proto is the ONNX project's file (Apache-2.0) as Debian's libonnx-dev
// 1.12.0 ships it (/usr/include/onnx/onnx.proto). To regenerate, with
// protoc-gen-go at the version of google.golang.org/protobuf in go.mod:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
//	cd predictor/onnxpb && protoc --proto_path=. --go_out=. --go_opt=paths=source_relative \
//	    --go_opt=Monnx.proto=github.com/pitstop-llm/pitstop/predictor/onnxpb onnx.proto
package onnxpb
