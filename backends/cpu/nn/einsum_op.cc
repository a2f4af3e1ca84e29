// nn.einsum (ONNX Einsum): any equation, as numpy's einsum reads it:
// terms of letters, `...` for broadcast leading dimensions, an explicit
// output after `->` (else the letters used once, in alphabetical order,
// after the ellipsis), repeated letters in a term take its diagonal, and
// letters missing from the output are summed. Computed directly (one loop
// over the output and summed indices): for the small contractions models
// use it for, and a reference where they are large.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kEinsum = "nn.einsum";

// The equation applied to operands of `shapes`: index variables (the
// ellipsis' dimensions first, then each letter), their sizes, which of
// them are the output's (in its order), and each operand's stride for
// each variable (0 where it does not use it, or broadcasts it).
struct Plan {
  std::vector<int64_t> sizes;
  std::vector<int> output;  // Variables of the output, in its order.
  std::vector<int> summed;
  std::vector<std::vector<int64_t>> strides;  // [operand][variable]
  Dims result;
};

struct Term {
  std::string letters;
  int ellipsis = -1;  // Letters before the ellipsis, or -1 without one.
};

absl::StatusOr<Term> ParseTerm(absl::string_view text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 3) == "...") {
      if (term.ellipsis != -1) {
        return OpError(kEinsum, "a term has two ellipses");
      }
      term.ellipsis = static_cast<int>(term.letters.size());
      i += 2;
    } else if ((text[i] >= 'a' && text[i] <= 'z') ||
               (text[i] >= 'A' && text[i] <= 'Z')) {
      term.letters += text[i];
    } else {
      return OpError(kEinsum, absl::StrCat("'", std::string(1, text[i]),
                                           "' is not a letter or ..."));
    }
  }
  return term;
}

absl::StatusOr<Plan> PlanEinsum(std::string equation,
                                const std::vector<Dims>& shapes) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '),
                 equation.end());
  const size_t arrow = equation.find("->");
  const std::string inputs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (absl::string_view text : absl::StrSplit(inputs, ',')) {
    absl::StatusOr<Term> term = ParseTerm(text);
    if (!term.ok()) return term.status();
    terms.push_back(*std::move(term));
  }
  if (terms.size() != shapes.size()) {
    return OpError(kEinsum, absl::StrCat("the equation has ", terms.size(),
                                         " operands; the op has ",
                                         shapes.size()));
  }
  // The ellipsis' dimensions, broadcast across operands (aligned right).
  Dims ellipsis;
  std::vector<int> ellipsis_rank(terms.size(), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    const int rank = static_cast<int>(shapes[k].size());
    const int letters = static_cast<int>(terms[k].letters.size());
    if (terms[k].ellipsis == -1 ? rank != letters : rank < letters) {
      return OpError(kEinsum, absl::StrCat("operand ", k, " has rank ", rank,
                                           " for its term of ", letters,
                                           " letters"));
    }
    if (terms[k].ellipsis == -1) continue;
    ellipsis_rank[k] = rank - letters;
    const int64_t* dims = shapes[k].data() + terms[k].ellipsis;
    if (ellipsis.size() < static_cast<size_t>(ellipsis_rank[k])) {
      ellipsis.insert(ellipsis.begin(), ellipsis_rank[k] - ellipsis.size(), 1);
    }
    for (int i = 0; i < ellipsis_rank[k]; ++i) {
      int64_t& size = ellipsis[ellipsis.size() - ellipsis_rank[k] + i];
      if (size == 1) {
        size = dims[i];
      } else if (dims[i] != 1 && dims[i] != size) {
        return OpError(kEinsum, "the ellipsis' dimensions do not broadcast");
      }
    }
  }
  Plan plan;
  const int e = static_cast<int>(ellipsis.size());
  plan.sizes.assign(ellipsis.begin(), ellipsis.end());
  std::map<char, int> variable;
  std::map<char, int> uses;
  for (size_t k = 0; k < terms.size(); ++k) {
    for (size_t i = 0; i < terms[k].letters.size(); ++i) {
      const char c = terms[k].letters[i];
      const int dim = static_cast<int>(i) +
                      (terms[k].ellipsis != -1 &&
                               static_cast<int>(i) >= terms[k].ellipsis
                           ? ellipsis_rank[k]
                           : 0);
      const int64_t size = shapes[k][dim];
      auto [it, added] = variable.try_emplace(c, plan.sizes.size());
      if (added) {
        plan.sizes.push_back(size);
      } else if (plan.sizes[it->second] != size) {
        return OpError(kEinsum,
                       absl::StrCat("'", std::string(1, c), "' is ",
                                    plan.sizes[it->second], " and ", size));
      }
      ++uses[c];
    }
  }
  // The output's variables: its letters, the ellipsis' where it is.
  std::vector<int> order;
  std::vector<bool> in_output(plan.sizes.size(), false);
  auto add_ellipsis = [&] {
    for (int v = 0; v < e; ++v) {
      in_output[v] = true;
      order.push_back(v);
    }
  };
  auto add_letter = [&](char c) -> absl::Status {
    auto it = variable.find(c);
    if (it == variable.end()) {
      return OpError(kEinsum, absl::StrCat("output letter '", std::string(1, c),
                                           "' is in no operand"));
    }
    if (in_output[it->second]) {
      return OpError(kEinsum, "an output letter repeats");
    }
    in_output[it->second] = true;
    order.push_back(it->second);
    return absl::OkStatus();
  };
  if (arrow == std::string::npos) {
    // Implicit: the ellipsis, then the letters used once, sorted.
    add_ellipsis();
    for (const auto& [c, count] : uses) {
      if (count == 1) {
        if (absl::Status s = add_letter(c); !s.ok()) return s;
      }
    }
  } else {
    absl::StatusOr<Term> out = ParseTerm(equation.substr(arrow + 2));
    if (!out.ok()) return out.status();
    for (size_t i = 0; i <= out->letters.size(); ++i) {
      if (out->ellipsis == static_cast<int>(i)) add_ellipsis();
      if (i == out->letters.size()) break;
      if (absl::Status s = add_letter(out->letters[i]); !s.ok()) return s;
    }
  }
  plan.output = order;
  for (size_t v = 0; v < plan.sizes.size(); ++v) {
    if (!in_output[v]) plan.summed.push_back(static_cast<int>(v));
  }
  for (int v : plan.output) plan.result.push_back(plan.sizes[v]);
  // Each operand's strides per variable (repeated letters add: diagonal).
  plan.strides.assign(terms.size(), std::vector<int64_t>(plan.sizes.size(), 0));
  for (size_t k = 0; k < terms.size(); ++k) {
    const Dims& dims = shapes[k];
    std::vector<int64_t> stride(dims.size(), 1);
    for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
      stride[i] = stride[i + 1] * dims[i + 1];
    }
    const int before = terms[k].ellipsis == -1
                           ? static_cast<int>(terms[k].letters.size())
                           : terms[k].ellipsis;
    for (int i = 0; i < static_cast<int>(terms[k].letters.size()); ++i) {
      const int dim = i < before ? i : i + ellipsis_rank[k];
      plan.strides[k][variable[terms[k].letters[i]]] += stride[dim];
    }
    for (int i = 0; i < ellipsis_rank[k]; ++i) {
      const int dim = before + i;
      const int v = e - ellipsis_rank[k] + i;
      if (dims[dim] != 1) plan.strides[k][v] = stride[dim];
    }
  }
  return plan;
}

std::vector<Dims> ShapesOf(ArgumentMetadata args) {
  std::vector<Dims> shapes;
  for (size_t i = 0; i < args.size(); ++i) {
    auto dims = args[i].shape.GetDimensions();
    shapes.emplace_back(dims.begin(), dims.end());
  }
  return shapes;
}

absl::Status EinsumMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  if (args.empty() || results.size() != 1) {
    return OpError(kEinsum, "takes one or more operands and has 1 result");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const DType dtype = args[i].dtype;
    if (dtype != args[0].dtype ||
        (dtype != DType::kF32 && dtype != DType::kF64)) {
      return OpError(kEinsum, "the operands must all be f32 or all f64");
    }
  }
  std::optional<absl::string_view> equation = attrs.GetString("equation");
  if (!equation) return OpError(kEinsum, "needs an `equation`");
  absl::StatusOr<Plan> plan = PlanEinsum(std::string(*equation), ShapesOf(args));
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(args[0].dtype, TensorShape(plan->result));
  return absl::OkStatus();
}

template <typename T>
void Contract(const Plan& plan, const std::vector<const T*>& operands,
              T* out) {
  // One odometer over the output's variables, then the summed ones.
  std::vector<int> variables = plan.output;
  variables.insert(variables.end(), plan.summed.begin(), plan.summed.end());
  std::vector<int64_t> index(variables.size(), 0);
  std::vector<int64_t> offsets(operands.size(), 0);
  int64_t summed_count = 1;
  for (int v : plan.summed) summed_count *= plan.sizes[v];
  int64_t total = summed_count;
  for (int v : plan.output) total *= plan.sizes[v];
  if (total == 0) {
    int64_t n = 1;
    for (int64_t d : plan.result) n *= d;
    std::fill(out, out + n, T(0));
    return;
  }
  int64_t written = 0;
  T sum = 0;
  for (int64_t step = 0; step < total; ++step) {
    T product = 1;
    for (size_t k = 0; k < operands.size(); ++k) {
      product *= operands[k][offsets[k]];
    }
    sum += product;
    if ((step + 1) % summed_count == 0) {
      out[written++] = sum;
      sum = 0;
    }
    // Advance the last variable first.
    for (int i = static_cast<int>(variables.size()) - 1; i >= 0; --i) {
      const int v = variables[i];
      ++index[i];
      for (size_t k = 0; k < operands.size(); ++k) {
        offsets[k] += plan.strides[k][v];
      }
      if (index[i] < plan.sizes[v]) break;
      for (size_t k = 0; k < operands.size(); ++k) {
        offsets[k] -= plan.strides[k][v] * plan.sizes[v];
      }
      index[i] = 0;
    }
  }
}

void Einsum(OpInvocation& invocation) {
  MetadataPointers metadata = ArgumentMetadataOf(invocation);
  absl::StatusOr<Plan> plan = PlanEinsum(
      std::string(invocation.attrs.GetString("equation").value_or("")),
      ShapesOf(ArgumentMetadata(metadata)));
  if (!plan.ok()) return FailAll(invocation, kEinsum, plan.status().message());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kEinsum, invocation.result_metadata[0]);
  if (!result) return;
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<const T*> operands;
    for (size_t i = 0; i < invocation.arguments.size(); ++i) {
      operands.push_back(static_cast<const DenseHostTensor&>(
                             invocation.argument(i))
                             .elements<T>()
                             .data());
    }
    Contract<T>(*plan, operands, static_cast<T*>(result->data()));
  };
  if (result->dtype() == DType::kF64) {
    run(TypeTag<double>{});
  } else {
    run(TypeTag<float>{});
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterEinsumOp(OpRegistry& registry) {
  registry.AddOp("nn.einsum", EinsumMetadata);
  registry.AddDispatch("nn.einsum", "cpu", Einsum);
}

}  // namespace asyncrt::nn
