// Round trip of the corert and corert_sync ops, types and #corert.shape.
// RUN: asyncrt-opt %s | asyncrt-opt | FileCheck %s
// RUN: asyncrt-opt %s --mlir-print-op-generic | asyncrt-opt | FileCheck %s

// CHECK-LABEL: func @types
// CHECK-SAME: !corert.tensorhandle, %{{.*}}: !corert.ophandler, %{{.*}}: !corert.op, %{{.*}}: !corert.opattrs, %{{.*}}: !corert.opattrs_ref, %{{.*}}: !corert.string, %{{.*}}: !corert.resource, %{{.*}}: !corert.variant, %{{.*}}: !corert.device
func.func @types(%a: !corert.tensorhandle, %b: !corert.ophandler,
                 %c: !corert.op, %d: !corert.opattrs, %e: !corert.opattrs_ref,
                 %f: !corert.string, %g: !corert.resource,
                 %h: !corert.variant, %i: !corert.device) {
  tfrt.return
}

// CHECK-LABEL: func @shape_attr
func.func @shape_attr() {
  // CHECK-NEXT: "corert.test"() {a = #corert.shape<1x?x3>, b = #corert.shape<*>, c = #corert.shape<>, d = #corert.shape<5>}
  "corert.test"() {a = #corert.shape<1x?x3>, b = #corert.shape<*>,
                   c = #corert.shape<>, d = #corert.shape<5>} : () -> ()
  tfrt.return
}

// CHECK-LABEL: func @op_handlers
func.func @op_handlers(%ch0: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: %[[NULL:.*]] = corert.create_null_op_handler
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  // CHECK-NEXT: %[[CPU:.*]] = corert.create_cpu_op_handler %[[NULL]]
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  // CHECK-NEXT: %[[LOG:.*]] = corert.create_logging_op_handler %[[CPU]] {sync_log_results = 1 : i64}
  %log = "corert.create_logging_op_handler"(%cpu) {sync_log_results = 1} : (!corert.ophandler) -> !corert.ophandler
  // CHECK-NEXT: %[[CH1:.*]] = corert.register_op_handler %[[LOG]] "sync_logging"
  %ch1 = corert.register_op_handler %log "sync_logging"
  // CHECK-NEXT: corert.get_op_handler %[[CH1]] "sync_logging"
  %h = corert.get_op_handler %ch1 "sync_logging"
  tfrt.return %ch1 : !tfrt.chain
}

// CHECK-LABEL: func @executeop
// CHECK-SAME: (%[[H:.*]]: !corert.ophandler, %[[A:.*]]: !corert.tensorhandle, %[[CH:.*]]: !tfrt.chain)
func.func @executeop(%h: !corert.ophandler, %a: !corert.tensorhandle,
                     %ch: !tfrt.chain) -> !tfrt.chain {
  // Attributes keep the order written.
  // CHECK-NEXT: %[[R:.*]] = corert.executeop(%[[H]]) "tfrt_test.add"(%[[A]], %[[A]]) {transpose_a = false, shape = [1, 2]} : 1
  %r = corert.executeop(%h) "tfrt_test.add"(%a, %a)
    {transpose_a = false, shape = [1, 2]} : 1
  // CHECK-NEXT: corert.executeop(%[[H]]) "tfrt_test.print"(%[[R]]){{$}}
  corert.executeop(%h) "tfrt_test.print"(%r)
  // CHECK-NEXT: corert.executeop(%[[H]]) "some.op"() : 2
  %r2:2 = corert.executeop(%h) "some.op"() : 2
  // CHECK-NEXT: corert.executeop(%[[H]]) "some.op"() {x = 1 : i32} {fn = @callee} : 1
  %r3 = corert.executeop(%h) "some.op"() {x = 1 : i32} {fn = @callee} : 1
  // Symbol references in the first dictionary are function attributes.
  // CHECK-NEXT: corert.executeop(%[[H]]) "some.op"() {b = "s"} {a = @callee} : 1
  %r4 = corert.executeop(%h) "some.op"() {a = @callee, b = "s"} : 1
  // CHECK-NEXT: corert.executeop(%[[H]]) "some.op"() {} {a = @callee}{{$}}
  corert.executeop(%h) "some.op"() {} {a = @callee}
  // CHECK-NEXT: corert.executeop(%[[H]]) "some.op"() {z = 0 : i32, "with space" = unit} : 1
  %r5 = corert.executeop(%h) "some.op"() {z = 0 : i32, "with space"} : 1
  // CHECK-NEXT: corert.executeop(%[[H]]) "some.op"() : 1 attributes {_tfrt_cost = 5 : i64}
  %r6 = corert.executeop(%h) "some.op"() : 1 attributes {_tfrt_cost = 5 : i64}
  // The generic form that TFRT programs write.
  // CHECK-NEXT: corert.executeop(%[[H]]) "tfrt_test.create_from_scalar"() {shape = [2, 3]} : 1
  %r7 = "corert.executeop"(%h) {op_attrs = [["shape", [2 : i64, 3 : i64]]], op_name = "tfrt_test.create_from_scalar", op_func_attrs = []}
    : (!corert.ophandler) -> !corert.tensorhandle
  // CHECK-NEXT: %[[SEQCH:.*]], %[[SEQR:.*]] = corert.executeop.seq(%[[H]], %[[CH]]) "tfrt_test.add"(%[[A]], %[[R]]) {x = 1 : i64} : 1
  %ch1, %s = corert.executeop.seq(%h, %ch) "tfrt_test.add"(%a, %r) {x = 1} : 1
  // CHECK-NEXT: %[[CH2:.*]] = corert.executeop.seq(%[[H]], %[[SEQCH]]) "tfrt_test.print"(%[[SEQR]]){{$}}
  %ch2 = corert.executeop.seq(%h, %ch1) "tfrt_test.print"(%s)
  // CHECK-NEXT: corert.executeop.seq(%[[H]], %[[CH2]]) "tfrt_test.print"(%[[A]]){{$}}
  %ch3 = corert.executeop.seq(%h, %ch2) "tfrt_test.print"(%a) : 0
  tfrt.return %ch3 : !tfrt.chain
}

func.func @callee(%ch: !tfrt.chain, %x: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  tfrt.return %ch, %x : !tfrt.chain, !corert.tensorhandle
}

func.func @cond_fn(%ch: !tfrt.chain, %x: !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle) {
  tfrt.return %ch, %x : !tfrt.chain, !corert.tensorhandle
}

// CHECK-LABEL: func @control_flow
func.func @control_flow(%c: !corert.tensorhandle, %a: !corert.tensorhandle,
                        %ch: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: %[[RCH:.*]], %[[R:.*]] = corert.cond %{{.*}} @callee @cond_fn(%{{.*}}, %{{.*}}) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  %r:2 = corert.cond %c @callee @cond_fn (%ch, %a) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  // CHECK-NEXT: corert.while @cond_fn @callee(%[[RCH]], %[[R]]) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  %ch2, %w = corert.while @cond_fn @callee (%r#0, %r#1) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  // CHECK-NEXT: %[[OP:.*]] = corert.make_composite_op @callee
  %op = "corert.make_composite_op"() {fn = @callee} : () -> !corert.op
  // CHECK-NEXT: "corert.execute_crt_op"(%[[OP]], %{{.*}}) {op_attrs = [], op_func_attrs = []} : (!corert.op, !corert.tensorhandle) -> !corert.tensorhandle
  %x = "corert.execute_crt_op"(%op, %a) {op_attrs = [], op_func_attrs = []}
    : (!corert.op, !corert.tensorhandle) -> !corert.tensorhandle
  // CHECK-NEXT: "corert.execute_crt_op"(%[[OP]], %{{.*}}) {op_attrs = []}
  %y = "corert.execute_crt_op"(%op, %a) {op_attrs = []}
    : (!corert.op, !corert.tensorhandle) -> !corert.tensorhandle
  tfrt.return %ch2 : !tfrt.chain
}

// CHECK-LABEL: func @tensors
func.func @tensors(%ch0: !tfrt.chain, %dev: !tfrt.device) -> !tfrt.chain {
  // CHECK-NEXT: %[[D:.*]] = corert.const_dense_tensor dense<[0, 1, 2]> : tensor<3xi32>
  %d = corert.const_dense_tensor dense<[0, 1, 2]>: tensor<3xi32>
  // CHECK-NEXT: corert.const_string_tensor {shape = [2], value = ["string", "tensor"]}
  %s = corert.const_string_tensor {shape = [2], value = ["string", "tensor"]}
  // CHECK-NEXT: corert.create_dense_tensor.ui64 {shape = [1], value = [2 : ui64]}
  %u = corert.create_dense_tensor.ui64 {shape = [1], value = [2 : ui64]}
  // CHECK-NEXT: corert.create_dense_tensor.i1 {shape = [1], value = [false]}
  %b = corert.create_dense_tensor.i1 {shape = [1], value = [false]}
  // CHECK-NEXT: corert.create_dense_tensor.bf16 {shape = [1], value = [2.500000e+00 : bf16]}
  %bf = corert.create_dense_tensor.bf16 {shape = [1], value = [2.5 : bf16]}
  // CHECK-NEXT: %[[CH1:.*]] = corert.print_tensorhandle %[[D]], %{{.*}}
  %ch1 = "corert.print_tensorhandle"(%d, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: corert.tensorhandle_to_shape %[[D]], %[[CH1]]
  %shape = "corert.tensorhandle_to_shape"(%d, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !ts.shape
  // CHECK-NEXT: %[[HT:.*]] = corert.tensorhandle_to_ht %[[D]], %[[CH1]]
  %ht = "corert.tensorhandle_to_ht"(%d, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !t.tensor
  // CHECK-NEXT: corert.ht_to_tensorhandle %[[HT]]{{$}}
  %th = "corert.ht_to_tensorhandle"(%ht) : (!t.tensor) -> !corert.tensorhandle
  // CHECK-NEXT: corert.tensorhandle_to_int32 %[[D]]
  %i = corert.tensorhandle_to_int32 %d
  // CHECK-NEXT: %[[TT:.*]] = corert.get_dst_tensor_type %[[D]], %{{.*}}
  %tt = corert.get_dst_tensor_type %d, %dev
  // CHECK-NEXT: corert.transfer %[[D]], %{{.*}}, %[[TT]]
  %tr = corert.transfer %d, %dev, %tt
  // CHECK-NEXT: corert.transfer_inferred_tensortype %[[D]], %{{.*}}
  %tr2 = corert.transfer_inferred_tensortype %d, %dev
  tfrt.return %ch1 : !tfrt.chain
}

// CHECK-LABEL: func @op_attrs
func.func @op_attrs(%ch0: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: %[[A:.*]] = corert.create_op_attrs
  %a = "corert.create_op_attrs"() : () -> !corert.opattrs
  // CHECK-NEXT: corert.op_attrs_set_array.i32 %[[A]], %{{.*}} {key = "shape", value = [1 : i32, 65536 : i32]}
  %ch1 = "corert.op_attrs_set_array.i32"(%a, %ch0) {key = "shape", value = [1 : i32, 65536 : i32]}
    : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: corert.op_attrs_set.f32 %[[A]], %{{.*}} {key = "value", value = 1.000000e+00 : f32}
  %ch2 = "corert.op_attrs_set.f32"(%a, %ch1) {key = "value", value = 1.0 : f32}
    : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: corert.op_attrs_set.dtype %[[A]], %{{.*}} {key = "type", value = f32}
  %ch3 = "corert.op_attrs_set.dtype"(%a, %ch2) {key = "type", value = f32}
    : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: corert.op_attrs_set.dense %[[A]], %{{.*}} {key = "dense", value = dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi32>}
  %ch4 = "corert.op_attrs_set.dense"(%a, %ch3) {key = "dense", value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>}
    : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: corert.op_attrs_set.bool %[[A]], %{{.*}} {key = "b", value = false}
  %ch5 = corert.op_attrs_set.bool %a, %ch4 {key = "b", value = false}
  // CHECK-NEXT: corert.op_attrs_set.i32 %[[A]], %{{.*}} {key = "i", value = 9 : i32}
  %ch6 = corert.op_attrs_set.i32 %a, %ch5 {key = "i", value = 9 : i32}
  // CHECK-NEXT: corert.op_attrs_set.aggregate %[[A]], %{{.*}} {key = "agg", value = [1 : i32, "x"]}
  %ch7 = corert.op_attrs_set.aggregate %a, %ch6 {key = "agg", value = [1 : i32, "x"]}
  // CHECK-NEXT: corert.op_attrs_set.shape %[[A]], %{{.*}} {key = "s", value = #corert.shape<2x?>}
  %ch8 = corert.op_attrs_set.shape %a, %ch7 {key = "s", value = #corert.shape<2x?>}
  // CHECK-NEXT: corert.op_attrs_set.str %[[A]], %{{.*}} {key = "t", value = "text"}
  %ch9 = corert.op_attrs_set.str %a, %ch8 {key = "t", value = "text"}
  tfrt.return %ch9 : !tfrt.chain
}

// CHECK-LABEL: func @sync
func.func @sync() attributes {tfrt.sync} {
  // CHECK-NEXT: %[[CPU:.*]] = corert_sync.get_op_handler "cpu"
  %cpu = corert_sync.get_op_handler "cpu"
  // CHECK-NEXT: %[[A:.*]] = corert_sync.executeop(%[[CPU]]) "tfrt_test.create_dense_tensor"() {shape = [1, 1], values = [2.000000e+00 : f32]} : 1
  %a = corert_sync.executeop(%cpu)
    "tfrt_test.create_dense_tensor"() { shape = [1, 1], values = [2.0 : f32] } : 1
  // CHECK-NEXT: %[[R:.*]] = corert_sync.executeop(%[[CPU]]) "tfrt_test.matmul"(%[[A]], %[[A]]) {transpose_a = false, transpose_b = false} : 1
  %r = corert_sync.executeop(%cpu) "tfrt_test.matmul"(%a, %a)
    {transpose_a = false, transpose_b = false}: 1
  // CHECK-NEXT: corert_sync.print_tensorhandle %[[R]]
  "corert_sync.print_tensorhandle"(%r) : (!corert.tensorhandle) -> ()
  // CHECK-NEXT: corert_sync.const_dense_tensor dense<1> : tensor<2xi64>
  %c = corert_sync.const_dense_tensor dense<1> : tensor<2xi64>
  // CHECK-NEXT: corert_sync.create_dense_tensor.f32 {shape = [1], value = [1.000000e+00 : f32]}
  %d = corert_sync.create_dense_tensor.f32 {shape = [1], value = [1.0 : f32]}
  // CHECK-NEXT: corert_sync.register_op_handler %[[CPU]] "again"
  corert_sync.register_op_handler %cpu "again"
  tfrt.return
}
