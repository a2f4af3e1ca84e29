// Round trip of the host tensor dialects (ts, tfrt_dht, tfrt_dht_sync,
// tfrt_sht, coo) and their types.
// RUN: asyncrt-opt %s | asyncrt-opt | FileCheck %s
// RUN: asyncrt-opt %s --mlir-print-op-generic | asyncrt-opt | FileCheck %s

// CHECK-LABEL: func @types
// `!t.tensor` is `!tfrt_tensor.tensor`.
// CHECK-SAME: (%{{.*}}: !tfrt_tensor.tensor, %{{.*}}: !tfrt_tensor.tensor, %{{.*}}: !ht.host_buffer, %{{.*}}: !ts.shape, %{{.*}}: !ts.partial_shape, %{{.*}}: !ts.fixed_rank_shape.2, %{{.*}}: !ts.other<"x">)
func.func @types(%a: !t.tensor, %b: !tfrt_tensor.tensor, %c: !ht.host_buffer,
                 %d: !ts.shape, %e: !ts.partial_shape,
                 %f: !ts.fixed_rank_shape.2, %g: !ts.other<"x">) {
  tfrt.return
}

// CHECK-LABEL: func @shapes
func.func @shapes(%ch: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: %[[A:.*]] = ts.build_shape [1, 57, 92]
  %a = ts.build_shape [1 : i64, 57 : i64, 92 : i64]
  // CHECK-NEXT: %[[E:.*]] = ts.build_shape []
  %e = ts.build_shape []
  // CHECK-NEXT: %[[P:.*]] = ts.build_partial_shape [-1, 57]
  %p = ts.build_partial_shape [-1 : i64, 57 : i64]
  // CHECK-NEXT: %[[U:.*]] = ts.build_unranked_partial_shape
  %u = ts.build_unranked_partial_shape
  // CHECK-NEXT: ts.print_shape %[[A]]{{$}}
  %c0 = ts.print_shape %a
  // CHECK-NEXT: %[[C1:.*]] = ts.print_shape %[[A]], %{{.*}}
  %c1 = ts.print_shape %a, %ch
  // CHECK-NEXT: ts.print_partial_shape %[[P]], %[[C1]]
  %c2 = ts.print_partial_shape %p, %c1
  // CHECK-NEXT: ts.print_partial_shape %[[U]]{{$}}
  %c3 = ts.print_partial_shape %u
  // CHECK-NEXT: ts.equal_shape %[[A]], %[[E]]{{$}}
  %eq = ts.equal_shape %a, %e
  // CHECK-NEXT: ts.equal_shape %[[A]], %[[E]], %[[C1]]
  %eq2 = ts.equal_shape %a, %e, %c1
  // CHECK-NEXT: ts.get_num_elements %[[A]]{{$}}
  %n = ts.get_num_elements %a
  // CHECK-NEXT: tfrt.constant.i32 1
  // CHECK-NEXT: ts.get_dimension %[[A]], %{{.*}}
  %i = tfrt.constant.i32 1
  %d = ts.get_dimension %a, %i
  // CHECK-NEXT: %[[S:.*]] = ts.to_shape %[[P]]
  %s = ts.to_shape %p
  // CHECK-NEXT: ts.to_partial_shape %[[S]]
  %ps = ts.to_partial_shape %s
  // CHECK-NEXT: %[[F:.*]] = ts.as_fixed_rank_shape.3 %[[A]]
  %f = ts.as_fixed_rank_shape.3 %a
  // CHECK-NEXT: ts.print_fixed_rank_shape.3 %[[F]], %[[C1]]
  %c4 = ts.print_fixed_rank_shape.3 %f, %c1
  // CHECK-NEXT: %[[F0:.*]] = ts.as_fixed_rank_shape.0 %[[E]]
  %f0 = ts.as_fixed_rank_shape.0 %e
  // CHECK-NEXT: ts.print_fixed_rank_shape.0 %[[F0]]{{$}}
  %c5 = ts.print_fixed_rank_shape.0 %f0
  tfrt.return %c4 : !tfrt.chain
}

// CHECK-LABEL: func @dense_host_tensor
func.func @dense_host_tensor(%c0: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: %[[A:.*]] = tfrt_dht.create_uninitialized_tensor.i32.2 [3, 2]
  %a = tfrt_dht.create_uninitialized_tensor.i32.2 [3 : i64, 2 : i64]
  // CHECK-NEXT: %[[S:.*]] = tfrt_dht.create_uninitialized_tensor.f32.0 []
  %s = tfrt_dht.create_uninitialized_tensor.f32.0 []
  // CHECK-NEXT: %[[C1:.*]] = tfrt_dht.fill_tensor_with_constant.i32 %[[A]], %{{.*}} 0 : i32
  %c1 = tfrt_dht.fill_tensor_with_constant.i32 %a, %c0 0 : i32
  // CHECK-NEXT: tfrt_dht.fill_tensor_with_constant.f32 %[[S]], %[[C1]] 1.000000e+00 : f32
  %c1f = tfrt_dht.fill_tensor_with_constant.f32 %s, %c1 1.0 : f32
  // CHECK-NEXT: %[[C2:.*]] = tfrt_dht.set_tensor_with_constant_values.i32 %[[A]], %[[C1]] [1 : i32, -1 : i32, 1 : i32, -1 : i32, 1 : i32, -1 : i32]
  %c2 = tfrt_dht.set_tensor_with_constant_values.i32 %a, %c1
    [1 : i32, -1 : i32, 1 : i32, -1 : i32, 1 : i32, -1 : i32]
  // CHECK-NEXT: %[[B:.*]] = tfrt_dht.create_uninitialized_tensor.bool.1 [2]
  %b = tfrt_dht.create_uninitialized_tensor.bool.1 [2 : i64]
  // CHECK-NEXT: tfrt_dht.set_tensor_with_constant_values.bool %[[B]], %[[C2]] [false, true]
  %c3 = tfrt_dht.set_tensor_with_constant_values.bool %b, %c2 [false, true]
  // CHECK-NEXT: %[[X:.*]] = tfrt_dht.create_uninitialized_tensor.complex64.1 [1]
  %x = tfrt_dht.create_uninitialized_tensor.complex64.1 [1 : i64]
  // CHECK-NEXT: tfrt_dht.set_tensor_with_constant_values.complex64 %[[X]], %[[C2]] [8.000000e+00 : f32, 0.000000e+00 : f32]
  %c3x = tfrt_dht.set_tensor_with_constant_values.complex64 %x, %c2 [8.0 : f32, 0.0 : f32]
  // CHECK-NEXT: %[[I:.*]] = tfrt_dht.create_uninitialized_tensor.i64.1 [3]
  // CHECK-NEXT: %[[V:.*]] = tfrt.constant.i64 1
  // CHECK-NEXT: tfrt_dht.set_tensor_with_values.i64 %[[I]], %[[C2]], %[[V]], %[[V]], %[[V]] : i64, i64, i64
  %i = tfrt_dht.create_uninitialized_tensor.i64.1 [3 : i64]
  %v = tfrt.constant.i64 1
  %c3i = "tfrt_dht.set_tensor_with_values.i64"(%i, %c2, %v, %v, %v)
    : (!t.tensor, !tfrt.chain, i64, i64, i64) -> !tfrt.chain
  // CHECK-NEXT: %[[C4:.*]] = tfrt_dht.print_tensor %[[A]], %[[C2]]
  %c4 = tfrt_dht.print_tensor %a, %c2
  // CHECK-NEXT: %[[EQ:.*]]:2 = tfrt_dht.tensor_equal.i32 %[[A]], %[[A]], %[[C4]]
  %eq, %c5 = tfrt_dht.tensor_equal.i32 %a, %a, %c4
  // CHECK-NEXT: tfrt_dht.tensor_allclose.f32 %[[S]], %[[S]], %[[C4]]
  %close, %c6 = tfrt_dht.tensor_allclose.f32 %s, %s, %c4
  // CHECK-NEXT: tfrt_dht.tensor_allclose.3ulp.f64 %[[S]], %[[S]], %[[C4]]
  %close3, %c7 = tfrt_dht.tensor_allclose.3ulp.f64 %s, %s, %c4
  // CHECK-NEXT: %[[BUF:.*]]:2 = tfrt_dht.get_buffer %[[A]], %[[C4]]
  %buf, %c8 = tfrt_dht.get_buffer %a, %c4
  // CHECK-NEXT: tfrt_dht.print_buffer %[[BUF]]#0, %[[BUF]]#1
  %c9 = tfrt_dht.print_buffer %buf, %c8
  // CHECK-NEXT: %[[SHAPE:.*]] = tfrt_dht.get_tensor_shape %[[A]]{{$}}
  %shape = tfrt_dht.get_tensor_shape %a
  // CHECK-NEXT: tfrt_dht.print_tensor_shape %[[SHAPE]], %[[C4]]
  %c10 = tfrt_dht.print_tensor_shape %shape, %c4
  // CHECK-NEXT: %[[SIZE:.*]] = tfrt.constant.i64 16
  // CHECK-NEXT: %[[ALIGN:.*]] = tfrt.constant.i64 4
  // CHECK-NEXT: %[[PARENT:.*]] = tfrt_dht.allocate_buffer %[[SIZE]], %[[ALIGN]]{{$}}
  // CHECK-NEXT: %[[SLICE:.*]] = tfrt_dht.get_buffer_slice %[[PARENT]], %[[ALIGN]], %[[ALIGN]]
  // CHECK-NEXT: tfrt_dht.make_tensor.f32 %[[SLICE]], %[[SHAPE]], %[[C4]]
  %size = tfrt.constant.i64 16
  %align = tfrt.constant.i64 4
  %parent = tfrt_dht.allocate_buffer %size, %align
  %slice = tfrt_dht.get_buffer_slice %parent, %align, %align
  %t, %c11 = tfrt_dht.make_tensor.f32 %slice, %shape, %c4
  tfrt.return %c11 : !tfrt.chain
}

// CHECK-LABEL: func @dense_host_tensor_sync
func.func @dense_host_tensor_sync() attributes {tfrt.sync} {
  // CHECK-NEXT: %[[A:.*]] = tfrt_dht_sync.create_uninitialized_tensor.i32.2 [3, 2]
  %a = tfrt_dht_sync.create_uninitialized_tensor.i32.2 [3 : i64, 2 : i64]
  // CHECK-NEXT: tfrt_dht_sync.set_tensor_with_constant_values.i32 %[[A]] [1 : i32, 2 : i32, 3 : i32, 4 : i32, 5 : i32, 6 : i32]
  tfrt_dht_sync.set_tensor_with_constant_values.i32 %a
    [1 : i32, 2 : i32, 3 : i32, 4 : i32, 5 : i32, 6 : i32]
  // CHECK-NEXT: tfrt_dht_sync.print_tensor %[[A]]
  tfrt_dht_sync.print_tensor %a
  // CHECK-NEXT: %[[S:.*]] = tfrt_dht_sync.get_tensor_shape %[[A]]
  %s = tfrt_dht_sync.get_tensor_shape %a
  // CHECK-NEXT: %[[N:.*]] = tfrt.constant.i64 8
  // CHECK-NEXT: %[[B:.*]] = tfrt_dht_sync.allocate_buffer %[[N]], %[[N]]
  // CHECK-NEXT: %[[SL:.*]] = tfrt_dht_sync.get_buffer_slice %[[B]], %[[N]], %[[N]]
  // CHECK-NEXT: tfrt_dht_sync.make_tensor.i64 %[[SL]], %[[S]]
  %n = tfrt.constant.i64 8
  %b = tfrt_dht_sync.allocate_buffer %n, %n
  %sl = tfrt_dht_sync.get_buffer_slice %b, %n, %n
  %t = tfrt_dht_sync.make_tensor.i64 %sl, %s
  tfrt.return
}

// CHECK-LABEL: func @string_and_coo
func.func @string_and_coo(%c0: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: tfrt_sht.create_tensor {shape = [2], values = ["string", "tensor"]}
  %s = "tfrt_sht.create_tensor"()
    {shape = [2], values = ["string", "tensor"]} : () -> !tfrt_tensor.tensor
  // CHECK-NEXT: %[[A:.*]] = tfrt_dht.create_uninitialized_tensor.i32.2 [3, 2]
  %a = tfrt_dht.create_uninitialized_tensor.i32.2 [3 : i64, 2 : i64]
  // CHECK-NEXT: %[[S:.*]]:2 = coo.convert_dht_to_coo.i32.2 %[[A]], %{{.*}}
  %sp, %c1 = coo.convert_dht_to_coo.i32.2 %a, %c0
  // CHECK-NEXT: %[[D:.*]]:2 = coo.convert_coo_to_dht.i32.2 %[[S]]#0, %[[S]]#1
  %d, %c2 = coo.convert_coo_to_dht.i32.2 %sp, %c1
  // CHECK-NEXT: coo.tensor_equal.i32.2 %[[S]]#0, %[[S]]#0, %[[D]]#1
  %eq, %c3 = coo.tensor_equal.i32.2 %sp, %sp, %c2
  // CHECK-NEXT: coo.convert_dht_to_coo.f32.0
  %f, %c4 = coo.convert_dht_to_coo.f32.0 %a, %c3
  // CHECK-NEXT: coo.print_tensor %[[S]]#0, %[[D]]#1
  %c5 = coo.print_tensor %sp, %c2
  tfrt.return %c5 : !tfrt.chain
}

// Ops the dialects do not define stay in generic form.
// CHECK-LABEL: func @unknown_ops
func.func @unknown_ops(%t: !t.tensor, %c: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: "tfrt_dht.some_kernel"(%{{.*}}, %{{.*}}) : (!tfrt_tensor.tensor, !tfrt.chain) -> !tfrt.chain
  %c1 = "tfrt_dht.some_kernel"(%t, %c) : (!t.tensor, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: "ts.some_kernel"()
  %s = "ts.some_kernel"() : () -> !ts.shape
  tfrt.return %c1 : !tfrt.chain
}
