// bef_executor --list_devices: one line per device, then exit (no program
// is read).
// RUN: bef_executor --list_devices | FileCheck %s
// RUN: bef_executor --list_devices --work_queue_type=s %s | FileCheck %s

// CHECK: {{^}}/device:CPU:0 type=cpu memory_limit={{[0-9]+\.[0-9]}}GiB numa_node={{[0-9]+}} bus_id=- links=- incarnation=0x{{[0-9a-f]+}} "{{.+}}, {{[0-9]+}} hardware threads"{{$}}
// CHECK-NOT: /device:
