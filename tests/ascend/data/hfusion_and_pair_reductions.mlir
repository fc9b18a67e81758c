module {
  func.func @k(%arg0: tensor<32x32xf32>, %arg1: tensor<32x32xi32>, %arg2: tensor<32x32xf32>) {
    %0 = tensor.empty() : tensor<32xf32>
    %1 = tensor.empty() : tensor<32xi32>
    %reduced:2 = hfusion.reduce_with_index {tie_break_left = true, unsigned_src = false} <min>
                ins(%arg0, %arg1 : tensor<32x32xf32>, tensor<32x32xi32>)
                outs(%0, %1 : tensor<32xf32>, tensor<32xi32>)
                dimensions = [1] -> tensor<32xf32>, tensor<32xi32>
    %pair:2 = linalg.reduce ins(%arg0, %arg1 : tensor<32x32xf32>, tensor<32x32xi32>) outs(%0, %1 : tensor<32xf32>, tensor<32xi32>) dimensions = [1]
      (%in: f32, %in_0: i32, %init: f32, %init_1: i32) {
        %2 = arith.cmpf olt, %in, %init : f32
        %3 = arith.select %2, %in, %init : f32
        %4 = arith.select %2, %in_0, %init_1 : i32
        linalg.yield %3, %4 : f32, i32
      }
    %two:2 = linalg.reduce ins(%arg0, %arg2 : tensor<32x32xf32>, tensor<32x32xf32>) outs(%0, %0 : tensor<32xf32>, tensor<32xf32>) dimensions = [1]
      (%in: f32, %in_0: f32, %init: f32, %init_1: f32) {
        %5 = arith.addf %in, %init : f32
        %6 = arith.addf %in_0, %init_1 : f32
        linalg.yield %5, %6 : f32, f32
      }
    %sum = linalg.reduce ins(%arg1 : tensor<32x32xi32>) outs(%1 : tensor<32xi32>) dimensions = [1]
      (%in: i32, %init: i32) {
        %7 = arith.addi %in, %init : i32
        linalg.yield %7 : i32
      }
    %root = hfusion.elemwise_unary {fun = #hfusion.unary_fn<sqrt>} ins(%arg0 : tensor<32x32xf32>) outs(%arg2 : tensor<32x32xf32>) -> tensor<32x32xf32>
    return
  }
}
