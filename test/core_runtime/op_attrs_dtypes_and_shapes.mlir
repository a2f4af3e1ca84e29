// corert.op_attrs_set.dtype takes builtin element types, !corert.string,
// which prints as CHAR (its element type), and the quantized corert types,
// as TFRT prints them.
// RUN: bef_executor %s 2>&1 | FileCheck %s
// RUN: asyncrt-translate -mlir-to-bef %s | asyncrt-translate -bef-to-mlir | FileCheck %s --check-prefix=ROUND

// CHECK-LABEL: --- Running 'dtypes'
func.func @dtypes() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %attrs = "corert.create_op_attrs"() : () -> !corert.opattrs
  %ch1 = "corert.op_attrs_set.dtype"(%attrs, %ch0) {key = "f16", value = f16} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch2 = "corert.op_attrs_set.dtype"(%attrs, %ch1) {key = "string", value = !corert.string} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch3 = "corert.op_attrs_set.dtype"(%attrs, %ch2) {key = "ui8", value = ui8} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch4 = "corert.op_attrs_set.dtype"(%attrs, %ch3) {key = "qui8", value = !corert.quint8} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch5 = "corert.op_attrs_set.dtype"(%attrs, %ch4) {key = "qui16", value = !corert.quint16} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch6 = "corert.op_attrs_set.dtype"(%attrs, %ch5) {key = "qi8", value = !corert.qint8} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch7 = "corert.op_attrs_set.dtype"(%attrs, %ch6) {key = "qi16", value = !corert.qint16} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch8 = "corert.op_attrs_set.dtype"(%attrs, %ch7) {key = "qi32", value = !corert.qint32} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK: OpAttrs contains 8 entries:
  // CHECK-NEXT: 'f16' type=DTYPE value=F16
  // CHECK-NEXT: 'qi16' type=DTYPE value=QI16
  // CHECK-NEXT: 'qi32' type=DTYPE value=QI32
  // CHECK-NEXT: 'qi8' type=DTYPE value=QI8
  // CHECK-NEXT: 'qui16' type=DTYPE value=QUI16
  // CHECK-NEXT: 'qui8' type=DTYPE value=QUI8
  // CHECK-NEXT: 'string' type=DTYPE value=CHAR
  // CHECK-NEXT: 'ui8' type=DTYPE value=UI8
  %ch9 = "tfrt_test.corert.op_attrs_print"(%attrs, %ch8) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch9 : !tfrt.chain
}
// ROUND: value = !corert.quint8
// ROUND: value = !corert.qint32

// Shapes: ranked, with unknown dimensions, rank 0 and unranked; the BEF
// shape attribute comes back from BEF to MLIR as written.
// CHECK-LABEL: --- Running 'shapes'
func.func @shapes() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %attrs = "corert.create_op_attrs"() : () -> !corert.opattrs
  %ch1 = "corert.op_attrs_set.shape"(%attrs, %ch0) {key = "a", value = #corert.shape<1x2x3>} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch2 = "corert.op_attrs_set.shape"(%attrs, %ch1) {key = "b", value = #corert.shape<1x?x3>} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch3 = "corert.op_attrs_set.shape"(%attrs, %ch2) {key = "c", value = #corert.shape<>} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch4 = "corert.op_attrs_set.shape"(%attrs, %ch3) {key = "d", value = #corert.shape<*>} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK: OpAttrs contains 4 entries:
  // CHECK-NEXT: 'a' type=SHAPE value=<1x2x3>
  // CHECK-NEXT: 'b' type=SHAPE value=<1x?x3>
  // CHECK-NEXT: 'c' type=SHAPE value=<>
  // CHECK-NEXT: 'd' type=SHAPE value=<unranked>
  %ch5 = "tfrt_test.corert.op_attrs_print"(%attrs, %ch4) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch5 : !tfrt.chain
}
// ROUND-LABEL: func @shapes
// ROUND: value = #corert.shape<1x2x3>
// ROUND: value = #corert.shape<1x?x3>
// ROUND: value = #corert.shape<>
// ROUND: value = #corert.shape<*>

// Aggregates: mixed values, one of them an aggregate itself.
// CHECK-LABEL: --- Running 'aggregates'
func.func @aggregates() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %attrs = "corert.create_op_attrs"() : () -> !corert.opattrs
  %ch1 = "corert.op_attrs_set.aggregate"(%attrs, %ch0)
    {key = "aggregate", value = [dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, dense<1> : tensor<i64>]}
    : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch2 = "corert.op_attrs_set.aggregate"(%attrs, %ch1)
    {key = "mixed", value = [7 : i32, "text", #corert.shape<2x?>, [1 : i32, "x"]]}
    : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK: OpAttrs contains 2 entries:
  // CHECK-NEXT: 'aggregate' type=AGGREGATE value=elt_count=2 [{dtype=I32, rank=2, elt_count=4}, {dtype=I64, rank=0, elt_count=1}]
  // CHECK-NEXT: 'mixed' type=AGGREGATE value=elt_count=4 [7, text, <2x?>, elt_count=2 [1, x]]
  %ch3 = "tfrt_test.corert.op_attrs_print"(%attrs, %ch2) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch3 : !tfrt.chain
}
