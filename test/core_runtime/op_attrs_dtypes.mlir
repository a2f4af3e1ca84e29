// corert.op_attrs_set.dtype takes builtin element types and !corert.string,
// which prints as CHAR (its element type), as TFRT prints it.
// RUN: bef_executor %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'dtypes'
func.func @dtypes() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %attrs = "corert.create_op_attrs"() : () -> !corert.opattrs
  %ch1 = "corert.op_attrs_set.dtype"(%attrs, %ch0) {key = "f16", value = f16} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch2 = "corert.op_attrs_set.dtype"(%attrs, %ch1) {key = "string", value = !corert.string} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  %ch3 = "corert.op_attrs_set.dtype"(%attrs, %ch2) {key = "ui8", value = ui8} : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  // CHECK: OpAttrs contains 3 entries:
  // CHECK-NEXT: 'f16' type=DTYPE value=F16
  // CHECK-NEXT: 'string' type=DTYPE value=CHAR
  // CHECK-NEXT: 'ui8' type=DTYPE value=UI8
  %ch4 = "tfrt_test.corert.op_attrs_print"(%attrs, %ch3) : (!corert.opattrs, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch4 : !tfrt.chain
}
