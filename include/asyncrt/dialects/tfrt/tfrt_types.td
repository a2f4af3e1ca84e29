//===- tfrt_types.td - Types of the tfrt dialect -----------*- tablegen -*-===//

#ifndef ASYNCRT_DIALECTS_TFRT_TFRT_TYPES_TD_
#define ASYNCRT_DIALECTS_TFRT_TFRT_TYPES_TD_

include "asyncrt/dialects/tfrt/tfrt_dialect.td"

class Tfrt_Type<string name, string type_mnemonic>
    : TypeDef<Tfrt_Dialect, name> {
  let mnemonic = type_mnemonic;
}

def Tfrt_ChainType : Tfrt_Type<"Chain", "chain"> {
  let summary = "control dependence token";
  let description = [{
    A `!tfrt.chain` carries no data. It orders side effects: a kernel that
    takes a chain runs only once the chain is available.
  }];
}

def Tfrt_StringType : Tfrt_Type<"String", "string"> {
  let summary = "host string value";
}

#endif  // ASYNCRT_DIALECTS_TFRT_TFRT_TYPES_TD_
